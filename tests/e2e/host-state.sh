#!/usr/bin/env bash
# Prints what a cluster with real nodes changes on the host, one fact per line, so that the state
# after `cluster.sh down` can be compared with the state before `up` (tests/run-all.sh, e2e phase):
# processes and mounts naming the cluster directory, the nodes' cgroups, the CNI bridges (ours, and
# buildah's, which images.sh must not make), iptables chains of Kubernetes, and the sysctls the
# kubelet and kube-proxy set, and the nodes' sockets' directories (/run/gs-*).
#
#   tests/e2e/host-state.sh CLUSTER_DIR
set -u
dir=${1:?cluster directory}
for p in /proc/[0-9]*; do
	[ "$p" = "/proc/$$" ] && continue
	cmd=$({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null) || continue
	case $cmd in *"$dir/"*) echo "process ${p#/proc/}: ${cmd:0:120}" ;; esac
done
awk -v d="$dir/" 'index($5, d) == 1 || index($4, d) == 1 { print "mount " $5 }' /proc/self/mountinfo
for c in /sys/fs/cgroup/*/node[0-9]*; do [ -d "$c" ] && echo "cgroup $c"; done
ip -o link show 2>/dev/null | awk -F': ' '$2 ~ /^(gs-node|cni-podman)/ { print "link " $2 }'
for t in filter nat mangle; do
	iptables -t $t -S 2>/dev/null | awk -v t=$t '/^-N KUBE-/ { print "iptables " t " chain " $2 }'
done
for s in vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.conf.all.route_localnet net.ipv4.ip_forward; do
	echo "sysctl $s=$(sysctl -n $s)"
done
for m in /var/lib/kubelet /var/log/pods /var/log/containers /run/containerd /run/netns /run/gs-*; do
	[ -e "$m" ] && echo "path $m"
done
exit 0
