#!/usr/bin/env bash
# tests/cluster/test_socket_paths.sh: a kubelet cluster's unix sockets fit in a socket path (107 bytes)
# wherever the repository is cloned, and a sockets' directory that would not fit is refused at once.
# No cluster is started: `cluster.sh sockets` lists every socket path the nodes would use, and `up`
# is only run where it must refuse before starting anything. Run by `make unit` and tests/run-all.sh
# (unit phase); appends PASS/FAIL lines to $GS_RESULTS when set, else prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
cluster=$PWD/tests/cluster/cluster.sh
TEST_NAME=socket-paths
# shellcheck source=result.sh
. tests/cluster/result.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A checkout 200 bytes deep, its e2e cluster directory under it, as tests/run-all.sh names it.
long=/home/$(printf 'u%.0s' $(seq 40))/src/github.com/$(printf 'o%.0s' $(seq 60))/$(printf 'r%.0s' $(seq 60))/gpu-scheduler
dir=$long/build/e2e-cluster
sockets() { env -u GS_CLUSTER_SOCKETS GS_NODE_MODE=kubelet GS_CLUSTER_DIR="$dir" "$@" "$cluster" sockets 2>&1; }

for names in "" gpu-worker,gpu-worker2,gpu-worker3,gpu-worker4; do
	what="${names:-node1..node4}"
	out=$(sockets env GS_NODE_NAMES="$names")
	rc=$?
	count=$(grep -c ' /' <<<"$out")
	if [ $rc = 0 ] && [ "$count" = 20 ]; then
		result ok "nodes $what, checkout at ${#long} bytes: cluster.sh sockets lists 20 socket paths"
	else
		result fail "nodes $what: cluster.sh sockets lists 20 socket paths" "exit $rc, $count paths: $out"
	fi
	over=$(awk '$1 > 107' <<<"$out")
	worst=$(sort -n <<<"$out" | tail -n 1)
	[ -z "$over" ] && [ $rc = 0 ] && result ok "nodes $what: every socket path fits in 107 bytes (longest: $worst)" ||
		result fail "nodes $what: every socket path fits in 107 bytes" "over: $over"
	grep -qF -- "$long" <<<"$out" && result fail "nodes $what: no socket lies under the checkout" "$out" ||
		result ok "nodes $what: no socket lies under the checkout"
done

# Two cluster directories, two sockets' directories: the integration and e2e clusters coexist.
a=$(GS_NODES=1 sockets | head -n 1)
b=$(GS_NODES=1 dir=$long/build/cluster sockets | head -n 1)
[ "${a%/node1/*}" != "${b%/node1/*}" ] && result ok "another cluster directory, another sockets' directory (${a#* }, ${b#* })" ||
	result fail "another cluster directory, another sockets' directory" "$a / $b"

# A sockets' directory the user chose too long: `sockets` and `up` refuse at once, naming the path.
toolong=$tmp/$(printf 's%.0s' $(seq 90))
out=$(GS_NODE_MODE=kubelet GS_NODES=1 GS_CLUSTER_DIR=$tmp/c GS_CLUSTER_SOCKETS=$toolong "$cluster" sockets 2>&1)
rc=$?
[ $rc != 0 ] && grep -q "error: the unix socket path $toolong/node1/.* is [0-9]* bytes, over the 107 a socket path can hold: set GS_CLUSTER_SOCKETS" <<<"$out" &&
	result ok "a ${#toolong}-byte GS_CLUSTER_SOCKETS: cluster.sh sockets fails naming the path" ||
	result fail "a ${#toolong}-byte GS_CLUSTER_SOCKETS: cluster.sh sockets fails naming the path" "exit $rc: $out"
t0=$SECONDS
out=$(GS_NODE_MODE=kubelet GS_NODES=1 GS_CLUSTER_DIR=$tmp/c GS_CLUSTER_SOCKETS=$toolong GS_APISERVER_PORT=1 GS_ETCD_PORT=2 "$cluster" up 2>&1)
rc=$?
if [ $rc != 0 ] && [ $((SECONDS - t0)) -le 5 ] && grep -q "error: the unix socket path $toolong/node1/" <<<"$out" &&
	[ ! -e "$tmp/c/pids" ] && [ ! -e "$toolong" ]; then
	result ok "cluster.sh up with it refuses within 5 s, naming the path, having started and made nothing"
else
	result fail "cluster.sh up with it refuses within 5 s, naming the path, having started and made nothing" \
		"exit $rc after $((SECONDS - t0)) s: $(tail -n 3 <<<"$out")"
fi

result_end
