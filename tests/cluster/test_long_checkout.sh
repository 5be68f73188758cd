#!/usr/bin/env bash
# tests/cluster/test_long_checkout.sh BUILD_DIR: a one-node kubelet cluster starts from a checkout whose
# path is over 80 bytes long (issue: a socket path holds 107 bytes, and the node's sockets once lay
# under the checkout). The checkout is this one, bind-mounted at a long path; the cluster is started from
# there with its directory under it, as a user's `make demo` or `make test` would, checked, stopped, and
# the host compared with before. Run by tests/run-all.sh (e2e phase, before the suite's own clusters,
# which cannot run beside it). Appends PASS/FAIL lines to $GS_RESULTS when set, else prints
# "N passed, N failed". Needs root (mount, real nodes).
set -u
cd "$(dirname "$0")/../.."
repo=$PWD
B=${1:-build}
case $B in /*) ;; *) B=$repo/$B ;; esac
TEST_NAME=long-checkout
# shellcheck source=result.sh
. tests/cluster/result.sh

top=$(mktemp -d /tmp/gs-long-checkout.XXXXXX)
long=$top/home/a-user-with-a-long-name/src/github.com/an-organisation/gpu-scheduler
mkdir -p "$long"
mount --bind "$repo" "$long" || { result fail "bind-mounting the checkout at $long" "mount failed"; exit 1; }
export GS_CLUSTER_DIR=$long/build/long-checkout-cluster GS_NODE_MODE=kubelet GS_NODES=1 GS_NODE_NAMES=
export GS_APISERVER_PORT=${GS_E2E_APISERVER_PORT:-17443} GS_ETCD_PORT=${GS_E2E_ETCD_PORT:-13379}
unset GS_CLUSTER_SOCKETS
# Out of the mount before unmounting it; the checkout is never removed through it (--one-file-system,
# and only once it is no longer a mount point).
cleanup() {
	(cd "$long" && tests/cluster/cluster.sh down >/dev/null 2>&1)
	cd "$repo" || return
	umount "$long" || umount -l "$long"
	mountpoint -q "$long" || rm -rf --one-file-system "$top"
}
trap cleanup EXIT

before=$(tests/e2e/host-state.sh "$GS_CLUSTER_DIR")
cd "$long"
echo "  checkout at $long (${#long} bytes)"
if tests/cluster/cluster.sh up; then
	result ok "from a checkout at ${#long} bytes, cluster.sh up starts a kubelet node: node1 Ready with nvidia.com/gpu=4 from the device plugin"
	socks=$(readlink -f "$GS_CLUSTER_DIR/sockets")
	case $socks in
	/run/gs-*) result ok "its sockets lie in $socks, not under the checkout" ;;
	*) result fail "its sockets lie under /run/gs-*" "$GS_CLUSTER_DIR/sockets -> $socks" ;;
	esac
	out=$("$B/gpu-scheduler" agent --once --socket "$socks/node1/pod-resources/kubelet.sock" 2>&1)
	rc=$?
	[ $rc = 0 ] && result ok "the kubelet's PodResources socket answers (gpu-scheduler agent --once)" ||
		result fail "the kubelet's PodResources socket answers (gpu-scheduler agent --once)" "exit $rc: $out"
	# The ctr the nodes' containerd came with (tests/cluster/nodes.sh), not one on PATH.
	ctr=$(. tests/cluster/versions.sh && echo "${GS_K8S_CACHE:-/var/cache/gpu-scheduler}/containerd-$CONTAINERD_VERSION/bin/ctr")
	[ -x "$ctr" ] || ctr=$(command -v ctr || echo ctr)
	out=$("$ctr" -a "$socks/node1/containerd.sock" -n k8s.io images ls -q 2>&1)
	grep -q gs-pause <<<"$out" && result ok "node1's containerd answers on its socket and holds the pause image" ||
		result fail "node1's containerd answers on its socket and holds the pause image" "$out"
else
	result fail "from a checkout at ${#long} bytes, cluster.sh up starts a kubelet node" \
		"see $GS_CLUSTER_DIR/logs: $(tail -n 3 "$GS_CLUSTER_DIR"/logs/kubelet-node1.log 2>/dev/null | tr '\n' ' ' | cut -c1-300)"
fi
tests/cluster/cluster.sh down >/dev/null 2>&1 || result fail "cluster.sh down" "failed"
after=$(tests/e2e/host-state.sh "$GS_CLUSTER_DIR")
[ "$after" = "$before" ] && result ok "down leaves the host as it was (sockets' directory included)" ||
	result fail "down leaves the host as it was" "$(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | tr '\n' ';')"

result_end
