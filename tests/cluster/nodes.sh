# Real nodes for tests/cluster/cluster.sh (sourced, not run): GS_NODE_MODE=kubelet turns the fake Node
# objects into real kubelets node1..nodeN, each with its own containerd, on this one machine, plus the
# default kube-scheduler and one kube-proxy so that Services and in-cluster config work as on kind.
# The design, the recipe and its pitfalls: docs/cluster.md, "Real nodes".
#
# Node names: node1..nodeN, or GS_NODE_NAMES (kind-like names such as gpu-worker, gpu-worker2, ...,
# labelled gpu-scheduler.io/node=GS_NODE_ALIASES; cluster.sh's node_name and node_alias). Everything on
# the host stays keyed by the node's number (directory, cgroup, bridge, ports); $DIR/nodes/NAME is a
# link to $DIR/nodes/nodeN when the name differs.
#
# Per node N, everything under $DIR/nodes/nodeN:
#   - containerd with its own root, state, socket, runc root and CNI config; sandbox image gs-pause
#   - a CNI bridge gs-nodeN (gateway 10.244.N.1/24, host-local IPAM), no masquerade
#   - a kubelet (cgroupfs, cgroupRoot /nodeN, own ports, webhook authn/authz, client cert
#     system:node:nodeN) advertising nvidia.com/gpu from the test device plugin (device-plugin-nodeN),
#     or with GS_DEVICE_PLUGIN=0 patched into its status once it registered
#   - both run in one private mount namespace with private binds over the paths a kubelet hard-codes
#     (/var/lib/kubelet, /var/log/pods, /var/log/containers), containerd's shim directory
#     (/run/containerd) and the pods' network namespace files (/run/netns): four nodes never see
#     each other's files, and every mount they make (network namespaces, secret volumes, rootfs)
#     disappears with the namespace.
#
# Teardown stops the kubelet, kills what runs in the node's cgroups, stops containerd, kills what is
# left in the node's mount namespace (the shims), removes cgroups and bridges, runs kube-proxy
# --cleanup and restores the sysctls the kubelet and kube-proxy changed.

# Cgroup v1 hierarchies a kubelet with the cgroupfs driver checks (name=systemd included); not the unified one.
NODE_CGROUP_CONTROLLERS="blkio cpu cpuacct cpuset devices freezer hugetlb memory net_cls net_prio perf_event pids systemd"
# Saved at `up`, restored at `down` (kubelet: overcommit and panic; kube-proxy: route_localnet;
# ip_forward: pods on one node reach pods on another through the host).
NODE_SYSCTLS="vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.conf.all.route_localnet net.ipv4.ip_forward"
POD_CIDR=10.244.0.0/16
PAUSE_IMAGE=localhost/gs-pause:3.2
# containerd: Debian's 1.6.20 beside a 1.20 kubelet (its config version 2); CONTAINERD_VERSION from its
# module beside a newer one (config version 4): CDI, which DRA drivers use, and the RuntimeConfig call.
if [ "$K8S_MINOR" -le 20 ]; then
	CTRD_BIN=$(dirname "$(command -v containerd || echo /usr/bin/containerd)")
else
	CTRD_BIN=$CACHE/containerd-$CONTAINERD_VERSION/bin
fi
CTR=$CTRD_BIN/ctr
KUBELET_PORT_BASE=${GS_KUBELET_PORT_BASE:-11250}

node_dir() { echo "$DIR/nodes/node$1"; }

# ---- unix sockets ------------------------------------------------------------------------------
# A unix socket's path holds at most 107 bytes (sun_path is 108 with its NUL), and bind() or connect()
# with a longer one fails with EINVAL: a socket under the cluster directory would make the cluster
# depend on where the repository was cloned. Every socket a node's processes create or dial outside its
# mount namespace therefore lives under SOCK_ROOT, a short directory named by a hash of the cluster
# directory (GS_CLUSTER_SOCKETS sets another; cluster.sh), linked from $DIR/sockets:
#   SOCK_ROOT/nodeN/containerd.sock(.ttrpc)       containerd's gRPC and ttrpc sockets
#   SOCK_ROOT/nodeN/device-plugins/               the kubelet's kubelet.sock and the device plugin's socket
#   SOCK_ROOT/nodeN/pod-resources/                the kubelet's PodResources socket (the node agent's)
#   SOCK_ROOT/nodeN/plugins_registry/, plugins/   kubelet plugin registration (DRA drivers)
#   SOCK_ROOT/NAME -> nodeN                       when the node's name is not nodeN
# Inside the node's namespace the kubelet's root is /var/lib/kubelet (bound from $d/var-lib-kubelet) and
# the four kubelet directories above are bound over its subdirectories of the same names, so the
# kubelet, which runs in the namespace, and the device plugin and the tests, which do not, name the
# same sockets by short paths. Shim sockets are /run/containerd/s/... inside the namespace.
SOCK_MAX=107
KUBELET_SOCK_DIRS="device-plugins pod-resources plugins_registry plugins"
DEVICE_PLUGIN_RESOURCE=nvidia.com/gpu

node_sock_dir() { echo "$SOCK_ROOT/node$1"; }

# socket_paths: every unix socket path of a kubelet cluster of $NODES nodes, one a line.
socket_paths() {
	local n s
	for n in $(seq 1 "$NODES"); do
		s=$(node_sock_dir "$n")
		echo "$s/containerd.sock"
		echo "$s/containerd.sock.ttrpc"
		echo "$s/device-plugins/kubelet.sock"
		echo "$s/device-plugins/gs-${DEVICE_PLUGIN_RESOURCE//\//-}.sock"
		echo "$s/pod-resources/kubelet.sock"
	done
}

# check_socket_paths: refuses, naming the path, any socket path over SOCK_MAX bytes.
check_socket_paths() {
	local p len
	while IFS= read -r p; do
		len=$(LC_ALL=C; printf '%s' "$p" | wc -c)
		[ "$len" -le "$SOCK_MAX" ] ||
			die "the unix socket path $p is $len bytes, over the $SOCK_MAX a socket path can hold: set GS_CLUSTER_SOCKETS to a shorter directory (the sockets' root, now $SOCK_ROOT)"
	done < <(socket_paths)
}

make_sock_dirs() {
	local n s k
	mkdir -p "$SOCK_ROOT"
	ln -sfn "$SOCK_ROOT" "$DIR/sockets"
	for n in $(seq 1 "$NODES"); do
		s=$(node_sock_dir "$n")
		for k in $KUBELET_SOCK_DIRS; do mkdir -p "$s/$k"; done
		[ "$(node_name "$n")" = "node$n" ] || ln -sfn "node$n" "$SOCK_ROOT/$(node_name "$n")"
	done
}

# Removes only what make_sock_dirs made: SOCK_ROOT may be a directory a user named.
remove_sock_dirs() {
	local e
	if [ -d "$SOCK_ROOT" ]; then
		for e in "$SOCK_ROOT"/*; do
			if [ -L "$e" ]; then
				rm -f "$e"
			elif [ -d "$e" ] && [[ ${e##*/} =~ ^node[0-9]+$ ]]; then
				rm -rf --one-file-system "$e"
			fi
		done
		rmdir "$SOCK_ROOT" 2>/dev/null || true
	fi
	rm -f "$DIR/sockets"
}

# The machine's address the nodes advertise and the apiserver serves on: a kubelet refuses 127.0.0.1.
host_ip() {
	local ip
	ip=${GS_NODE_IP:-}
	[ -n "$ip" ] || ip=$(ip -4 -o route get 192.0.2.255 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
	[ -n "$ip" ] || ip=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
	[ -n "$ip" ] || die "no non-loopback IPv4 address for the nodes (set GS_NODE_IP)"
	echo "$ip"
}

check_node_binaries() {
	local b
	for b in "$K8S_BIN/kubelet" "$K8S_BIN/kube-proxy" "$K8S_BIN/kube-scheduler"; do
		[ -x "$b" ] || die "$b is missing: run tests/cluster/build-k8s.sh"
	done
	for b in containerd containerd-shim-runc-v2 ctr; do
		[ -x "$CTRD_BIN/$b" ] || die "$CTRD_BIN/$b is needed ($([ "$K8S_MINOR" -le 20 ] && echo "apt-get install containerd; tests/deps.sh" || echo "tests/cluster/build-deps.sh containerd"))"
	done
	for b in runc iptables; do
		command -v $b >/dev/null || die "$b is needed (apt-get install runc iptables; tests/deps.sh)"
	done
	[ -x /usr/lib/cni/bridge ] || die "/usr/lib/cni/bridge is needed (apt-get install containernetworking-plugins)"
	[ "$(id -u)" = 0 ] || die "real nodes need root (cgroups, mounts, bridges)"
	[ -d /sys/fs/cgroup/memory ] || die "real nodes need cgroup v1 hierarchies under /sys/fs/cgroup (as on these machines)"
}

# ---- the pause image ---------------------------------------------------------------------------

# A docker-archive of the static pause binary from the Kubernetes tree: the sandbox image, built here
# because no registry is reachable. Cached beside the binaries, rebuilt when pause.c changes.
pause_archive() {
	local src=$K8S_BIN/../pause.c out=$K8S_BIN/../pause.tar tmp layer cfg lsum csum
	[ -s "$out" ] && [ "$out" -nt "$src" ] && { echo "$out"; return; }
	[ -s "$src" ] || die "$src is missing: run tests/cluster/build-k8s.sh"
	tmp=$(mktemp -d)
	mkdir "$tmp/root"
	gcc -Os -static -o "$tmp/root/pause" "$src" || die "building pause"
	strip "$tmp/root/pause"
	tar --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$tmp/root" -cf "$tmp/layer.tar" pause
	lsum=$(sha256sum "$tmp/layer.tar" | cut -d' ' -f1)
	cfg="{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Entrypoint\":[\"/pause\"],\"User\":\"65535:65535\"},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:$lsum\"]}}"
	csum=$(printf '%s' "$cfg" | sha256sum | cut -d' ' -f1)
	mkdir "$tmp/archive" "$tmp/archive/$lsum"
	mv "$tmp/layer.tar" "$tmp/archive/$lsum/layer.tar"
	printf '%s' "$cfg" >"$tmp/archive/$csum.json"
	printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$csum" "$PAUSE_IMAGE" "$lsum" \
		>"$tmp/archive/manifest.json"
	tar --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$tmp/archive" -cf "$out.tmp" .
	mv "$out.tmp" "$out"
	rm -rf "$tmp"
	echo "$out"
}

# ---- per-node files ----------------------------------------------------------------------------

# containerd_config_v2 / containerd_config_v4: node $n's containerd configuration on stdout (the
# variables of write_node_files: d, s).
containerd_config_v2() {
	cat <<EOF
version = 2
root = "$d/containerd/root"
state = "$d/containerd/state"
oom_score = 0
[grpc]
  address = "$s/containerd.sock"
[ttrpc]
  address = "$s/containerd.sock.ttrpc"
[debug]
  level = "warn"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$d/containerd/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni/net.d"
EOF
}

containerd_config_v4() {
	# NRI off (its socket would be one for four nodes), no imports from /etc, CDI specs per node.
	cat <<EOF
version = 4
root = "$d/containerd/root"
state = "$d/containerd/state"
oom_score = 0
imports = []
disabled_plugins = ["io.containerd.nri.v1.nri"]
[debug]
  level = "warn"
[plugins]
  [plugins.'io.containerd.server.v1.grpc']
    address = "$s/containerd.sock"
  [plugins.'io.containerd.server.v1.ttrpc']
    address = "$s/containerd.sock.ttrpc"
  [plugins.'io.containerd.internal.v1.opt']
    path = "$d/containerd/opt"
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "$PAUSE_IMAGE"
  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = true
    disable_apparmor = true
    cdi_spec_dirs = ["$d/cdi"]
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          Root = "$d/containerd/runc"
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["/usr/lib/cni"]
      conf_dir = "$d/cni/net.d"
EOF
}

write_node_files() {
	local n=$1 d s ip=$2 name labels
	d=$(node_dir "$n")
	s=$(node_sock_dir "$n")
	name=$(node_name "$n")
	labels=gpu-scheduler.test/node=$name
	[ -n "$(node_alias "$n")" ] && labels+=,$NODE_ALIAS_KEY=$(node_alias "$n")
	mkdir -p "$d/containerd" "$d/cni/net.d" "$d/cni/ipam" "$d/var-lib-kubelet" \
		"$d/log-pods" "$d/log-containers" "$d/run-containerd" "$d/netns" "$d/cdi"
	sign "node$n" "/O=system:nodes/CN=system:node:$name" client_ext
	kubeconfig_for "$d/kubeconfig" "node$n"
	if [ "$K8S_MINOR" -le 20 ]; then containerd_config_v2; else containerd_config_v4; fi >"$d/containerd.toml"
	cat >"$d/cni/net.d/10-gs.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "gs-node$n",
  "plugins": [{
    "type": "bridge", "bridge": "gs-node$n", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {"type": "host-local", "dataDir": "$d/cni/ipam",
             "ranges": [[{"subnet": "10.244.$n.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}
  }]
}
EOF
	cat >"$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: $((KUBELET_PORT_BASE + n))
healthzBindAddress: 127.0.0.1
healthzPort: $((KUBELET_PORT_BASE + 10 + n))
readOnlyPort: 0
cgroupDriver: cgroupfs
cgroupRoot: /node$n
failSwapOn: false
makeIPTablesUtilChains: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization:
  mode: Webhook
# Four kubelets share one disk and one memory: eviction would see the others' usage as theirs.
evictionHard: {memory.available: 50Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF
	# Since 1.27 the runtime's endpoint is configuration, and the sandbox image is containerd's; 1.35+
	# refuses cgroup v1 (these machines' only hierarchy) unless told not to.
	[ "$K8S_MINOR" -le 20 ] || cat >>"$d/kubelet.yaml" <<EOF
containerRuntimeEndpoint: unix://$s/containerd.sock
failCgroupV1: false
EOF
	local runtime_flags="--container-runtime remote --container-runtime-endpoint unix://$s/containerd.sock --pod-infra-container-image $PAUSE_IMAGE"
	[ "$K8S_MINOR" -le 20 ] || runtime_flags=
	# Everything that must happen inside the node's mount namespace; run by `unshare -m`.
	cat >"$d/run.sh" <<EOF
#!/bin/bash
set -e
mount --bind $d/var-lib-kubelet /var/lib/kubelet
for k in $KUBELET_SOCK_DIRS; do
	mkdir -p /var/lib/kubelet/\$k
	mount --bind $s/\$k /var/lib/kubelet/\$k
done
# Shared already, so the kubelet does not bind its root over itself to make it shared (which would
# hide the binds above); the namespace is private, so nothing propagates to the host.
mount --make-rshared /var/lib/kubelet
mount --bind $d/log-pods /var/log/pods
mount --bind $d/log-containers /var/log/containers
mount --bind $d/run-containerd /run/containerd
mount --bind $d/netns /run/netns
PATH=$CTRD_BIN:\$PATH $CTRD_BIN/containerd --config $d/containerd.toml </dev/null >>$LOGS/containerd-node$n.log 2>&1 &
echo \$! >$PIDS/containerd-node$n.pid
for i in \$(seq 1 100); do [ -S $s/containerd.sock ] && break; sleep 0.1; done
exec $d/kubelet.sh
EOF
	# The kubelet alone, also run again in the node's namespace by kubelet_start (a kubelet restart).
	cat >"$d/kubelet.sh" <<EOF
#!/bin/bash
exec $K8S_BIN/kubelet --config $d/kubelet.yaml --kubeconfig $d/kubeconfig --root-dir /var/lib/kubelet \\
	$runtime_flags --hostname-override $name --node-ip $ip \\
	--node-labels $labels --v=1
EOF
	chmod 755 "$d/run.sh" "$d/kubelet.sh"
}

# kubelet_stop N / kubelet_start N: node N's kubelet alone stops (SIGTERM), or starts again inside the
# node's mount namespace (entered through its containerd, which keeps running): a kubelet restart, as
# after an upgrade or a crash, with the pods and containerd left as they are.
kubelet_stop() {
	proc_pid "kubelet-node$1" >/dev/null || die "the kubelet of node$1 is not running"
	stop -g 10 "kubelet-node$1"
}

kubelet_start() {
	local n=$1 pid
	pid=$(proc_pid "containerd-node$n") || die "containerd of node$n is not running"
	proc_pid "kubelet-node$n" >/dev/null && die "the kubelet of node$n is running"
	start "kubelet-node$n" nsenter -t "$pid" -m "$(node_dir "$n")/kubelet.sh"
	wait_until "node$n Ready after the kubelet's start" "kubelet-node$n" node_ready "$n"
}

# The cgroup a kubelet's cgroupRoot names must exist in every hierarchy before it starts.
make_node_cgroups() {
	local n=$1 c p
	for c in $NODE_CGROUP_CONTROLLERS; do
		p=/sys/fs/cgroup/$c
		[ -d "$p" ] || continue
		mkdir -p "$p/node$n"
		if [ "$c" = cpuset ]; then
			cat "$p/cpuset.cpus" >"$p/node$n/cpuset.cpus"
			cat "$p/cpuset.mems" >"$p/node$n/cpuset.mems"
		fi
	done
}

# Host directories the mount namespaces bind over; made only if missing, removed again by `down`.
make_mountpoints() {
	local m
	: >"$DIR/nodes/mountpoints"
	for m in /var/lib/kubelet /var/log/pods /var/log/containers /run/containerd /run/netns; do
		[ -d "$m" ] && continue
		mkdir -p "$m"
		echo "$m" >>"$DIR/nodes/mountpoints"
	done
}

# The kubelet and kube-proxy leave chains that `kube-proxy --cleanup` keeps (KUBE-PROXY-CANARY,
# KUBE-MARK-*). They are swept at `down` unless the machine had KUBE- chains before `up`: then they
# may belong to a real kubelet, and are left alone.
save_iptables() {
	if iptables-save 2>/dev/null | grep -q '^:KUBE-'; then echo keep; else echo sweep; fi >"$DIR/nodes/iptables"
}

sweep_iptables() {
	local t c rule chains
	[ "$(cat "$DIR/nodes/iptables" 2>/dev/null)" = sweep ] || return 0
	for t in filter nat mangle; do
		iptables -t $t -S 2>/dev/null | grep -E '^-A [A-Z]+ .*-j KUBE-' | grep -vE '^-A KUBE-' | sed 's/^-A /-D /' |
			while IFS= read -r rule; do eval "iptables -t $t $rule" || true; done || true
		chains=$(iptables -t $t -S 2>/dev/null | awk '/^-N KUBE-/ { print $2 }' || true)
		for c in $chains; do iptables -t $t -F "$c"; done
		for c in $chains; do iptables -t $t -X "$c" || log "iptables: $t/$c could not be removed"; done
	done
	rm -f "$DIR/nodes/iptables"
}

save_sysctls() {
	local s
	[ -s "$DIR/nodes/sysctls" ] && return 0
	for s in $NODE_SYSCTLS; do echo "$s=$(sysctl -n "$s")"; done >"$DIR/nodes/sysctls"
}

restore_sysctls() {
	local line
	[ -s "$DIR/nodes/sysctls" ] || return 0
	while IFS= read -r line; do sysctl -q -w "$line" >/dev/null || log "could not restore $line"; done \
		<"$DIR/nodes/sysctls"
	rm -f "$DIR/nodes/sysctls"
}

# ---- up ----------------------------------------------------------------------------------------

start_scheduler() {
	sign kube-scheduler /CN=system:kube-scheduler client_ext
	kubeconfig_for "$DIR/kube-scheduler.kubeconfig" kube-scheduler
	start kube-scheduler "$K8S_BIN/kube-scheduler" --kubeconfig "$DIR/kube-scheduler.kubeconfig" \
		--leader-elect=false "${INSECURE_PORT_OFF[@]}" --secure-port 0 --v=1
}

start_proxy() {
	sign kube-proxy /CN=system:kube-proxy client_ext
	kubeconfig_for "$DIR/kube-proxy.kubeconfig" kube-proxy
	# One kube-proxy serves every node: they share this network namespace. Conntrack limits are left
	# as they are (0): /proc/sys/net/netfilter is read-only here, as in most containers.
	start kube-proxy "$K8S_BIN/kube-proxy" --kubeconfig "$DIR/kube-proxy.kubeconfig" \
		--hostname-override "$(node_name 1)" --proxy-mode iptables --cluster-cidr "$POD_CIDR" \
		--conntrack-max-per-core 0 --conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0 \
		--metrics-bind-address 127.0.0.1:$((KUBELET_PORT_BASE + 20)) \
		--healthz-bind-address 127.0.0.1:$((KUBELET_PORT_BASE + 21)) --v=1
}

import_images() {
	local n=$1 sock f
	sock=$(node_sock_dir "$n")/containerd.sock
	for f in "$(pause_archive)" $NODE_IMAGES; do
		# ctr 2.x warns on every call that cgroup v1 is deprecated: said once in docs/cluster.md.
		"$CTR" -a "$sock" -n k8s.io images import "$f" 2> >(grep -v 'DEPRECATION: The support for cgroup v1' >&2) >/dev/null ||
			die "importing $f into node$n's containerd"
	done
}

node_registered() { api GET "/api/v1/nodes/$(node_name "$1")" >/dev/null 2>&1; }

node_ready() {
	api GET "/api/v1/nodes/$(node_name "$1")" 2>/dev/null | tr -d ' \n' |
		grep -q '"type":"Ready","status":"True"'
}

advertise_gpus() {
	local n=$1
	# An extended resource is advertised by PATCHing the status; the kubelet keeps it and derives
	# allocatable from it. (A device plugin would do this on a machine with GPUs.)
	api PATCH "/api/v1/nodes/$(node_name "$n")/status" \
		"{\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"$NODE_GPUS\"},\"allocatable\":{\"nvidia.com/gpu\":\"$NODE_GPUS\"}}}" \
		application/merge-patch+json >/dev/null
}

# DEVICE_PLUGIN=1 (cluster.sh: GS_DEVICE_PLUGIN, 1 by default with kubelets): the test device plugin
# registers nvidia.com/gpu with the node's kubelet (its kubelet.sock is in the node's
# /var/lib/kubelet/device-plugins, bound from SOCK_ROOT/nodeN/device-plugins; the plugin runs outside
# the node's mount namespace and finds it there).
# The kubelet then reports the capacity itself.
start_device_plugin() {
	local n=$1 d
	d=$(node_dir "$n")
	# --proc-dir: the node's GPUs as the NVIDIA driver lists them, for the agent's index table
	# (tests/cluster/deploy.sh points the agent there).
	start "device-plugin-node$n" "$DEVICE_PLUGIN_BIN" --plugin-dir "$(node_sock_dir "$n")/device-plugins" \
		--node "$(node_name "$n")" --count "$NODE_GPUS" --proc-dir "$d/proc-driver/nvidia/gpus" \
		--health-file "$d/unhealthy-gpus"
}

node_gpus_from_plugin() {
	api GET "/api/v1/nodes/$(node_name "$1")" | tr -d ' \n' |
		grep -q "\"capacity\":{[^}]*\"nvidia.com/gpu\":\"$NODE_GPUS\""
}

nodes_up() {
	local ip n d
	check_node_binaries
	if [ "$DEVICE_PLUGIN" = 1 ]; then
		DEVICE_PLUGIN_BIN=$("$here/build-device-plugin.sh") || die "cannot build the device plugin"
	fi
	# Node names, cgroups, bridges and the pod network are fixed: one such cluster per machine.
	for n in $(seq 1 "$NODES"); do
		if [ -d "/sys/fs/cgroup/memory/node$n" ] || ip link show "gs-node$n" >/dev/null 2>&1; then
			die "cgroup /node$n or bridge gs-node$n exists: another cluster with real nodes is up on this machine (make demo-down?)"
		fi
	done
	ip=$API_ADDR
	mkdir -p "$DIR/nodes"
	save_sysctls
	save_iptables
	sysctl -q -w net.ipv4.ip_forward=1
	make_mountpoints
	make_sock_dirs
	start_scheduler
	start_proxy
	for n in $(seq 1 "$NODES"); do
		d=$(node_dir "$n")
		write_node_files "$n" "$ip"
		# tests find a node's directory by the node's name: $DIR/nodes/NAME, $DIR/sockets/NAME
		[ "$(node_name "$n")" = "node$n" ] || ln -sfn "node$n" "$DIR/nodes/$(node_name "$n")"
		make_node_cgroups "$n"
		start "kubelet-node$n" unshare -m --propagation private "$d/run.sh"
	done
	for n in $(seq 1 "$NODES"); do
		wait_until "containerd of node$n" "kubelet-node$n" test -S "$(node_sock_dir "$n")/containerd.sock"
		# The pid file is written inside the namespace; the path is the same.
		proc_pid "containerd-node$n" >/dev/null || die "containerd of node$n is not running"
		readlink "/proc/$(proc_pid "kubelet-node$n")/ns/mnt" >"$PIDS/node$n.mntns"
		import_images "$n"
	done
	for n in $(seq 1 "$NODES"); do
		wait_until "node$n ($(node_name "$n")) registered" "kubelet-node$n" node_registered "$n"
		if [ "$DEVICE_PLUGIN" = 1 ]; then
			start_device_plugin "$n"
		else
			advertise_gpus "$n"
		fi
	done
	if [ "$DEVICE_PLUGIN" = 1 ]; then
		for n in $(seq 1 "$NODES"); do
			wait_until "node$n: nvidia.com/gpu=$NODE_GPUS from the device plugin" "device-plugin-node$n" \
				node_gpus_from_plugin "$n"
		done
	fi
	for n in $(seq 1 "$NODES"); do
		wait_until "node$n ($(node_name "$n")) Ready" "kubelet-node$n" node_ready "$n"
	done
}

# ---- down --------------------------------------------------------------------------------------

# pids_in_cgroup N: every process in /nodeN and below (pods' containers and sandboxes).
pids_in_cgroup() {
	local p=/sys/fs/cgroup/pids/node$1
	[ -d "$p" ] || return 0
	find "$p" -name cgroup.procs -exec cat {} + 2>/dev/null
}

# pids_in_mntns NS: every process whose mount namespace is NS (containerd, its shims).
pids_in_mntns() {
	local ns=$1 p
	[ -n "$ns" ] || return 0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$ns" ] && echo "${p#/proc/}"
	done
	return 0
}

# kill_all DESC PIDS...: SIGKILL, then wait (up to 5 s) until they are gone.
kill_all() {
	local desc=$1
	shift
	[ $# -gt 0 ] || return 0
	kill -KILL "$@" 2>/dev/null || true
	wait_gone 5 "$@" || log "$desc: still alive after SIGKILL: $*"
}

remove_node_cgroups() {
	local n=$1 c p
	# runc also makes the pods' cgroups in the unified hierarchy of this hybrid layout.
	for c in $NODE_CGROUP_CONTROLLERS unified; do
		p=/sys/fs/cgroup/$c/node$n
		[ -d "$p" ] || continue
		# Depth first: a cgroup with children cannot be removed.
		find "$p" -depth -type d -exec rmdir {} + 2>/dev/null || true
		[ -d "$p" ] && log "cgroup $p could not be removed"
	done
	return 0
}

# All nodes at once, in the order that leaves nothing behind: the kubelets first, so that nothing
# restarts what is killed next; then the pods (everything in the nodes' cgroups); then containerd;
# then the shims, which are what is left in the nodes' mount namespaces. The namespaces then die with
# their last process, taking every mount made in them along.
nodes_down() {
	local d m n ns
	local -a nodes=() kubelets=() containerds=() pids=() plugins=()
	[ -d "$DIR/nodes" ] || { remove_sock_dirs; return 0; }
	for d in "$DIR"/nodes/node[0-9]*; do
		[ -d "$d" ] && [ ! -L "$d" ] || continue
		nodes+=("${d##*/node}")
		kubelets+=("kubelet-${d##*/}")
		plugins+=("device-plugin-${d##*/}")
		containerds+=("containerd-${d##*/}")
	done
	[ ${#nodes[@]} -gt 0 ] && stop -g 5 "${plugins[@]}" "${kubelets[@]}"
	for n in "${nodes[@]}"; do
		# shellcheck disable=SC2207 # one PID per word
		pids+=($(pids_in_cgroup "$n"))
	done
	kill_all "pods" "${pids[@]}"
	[ ${#nodes[@]} -gt 0 ] && stop -g 5 "${containerds[@]}"
	pids=()
	for n in "${nodes[@]}"; do
		ns=$(cat "$PIDS/node$n.mntns" 2>/dev/null || true)
		# shellcheck disable=SC2207
		pids+=($(pids_in_mntns "$ns"))
		rm -f "$PIDS/node$n.mntns"
	done
	kill_all "shims" "${pids[@]}"
	for n in "${nodes[@]}"; do
		remove_node_cgroups "$n"
		ip link del "gs-node$n" 2>/dev/null || true
	done
	stop kube-scheduler
	if proc_pid kube-proxy >/dev/null; then
		stop kube-proxy
		"$K8S_BIN/kube-proxy" --cleanup >>"$LOGS/kube-proxy.log" 2>&1 || log "kube-proxy --cleanup failed (see $LOGS/kube-proxy.log)"
	fi
	if [ -s "$DIR/nodes/mountpoints" ]; then
		while IFS= read -r m; do
			[ ! -d "$m" ] || rmdir "$m" 2>/dev/null || log "$m is not empty: left in place"
		done \
			<"$DIR/nodes/mountpoints"
	fi
	sweep_iptables
	restore_sysctls
	# Node state holds no mounts of ours any more: they lived in the nodes' namespaces.
	rm -rf --one-file-system "$DIR/nodes"
	remove_sock_dirs
}
