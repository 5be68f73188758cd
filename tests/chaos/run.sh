#!/usr/bin/env bash
# The chaos suite (`make chaos`): every tests/chaos/chaos_*.sh, one after the other, against a control
# plane of its own that this script brings up and down (tests/cluster/cluster.sh; the kube-apiserver
# writes its binding audit log, GS_APISERVER_AUDIT=1). Ends with "N passed, N failed".
#
#   tests/chaos/run.sh BUILD_DIR [short|full] [NAME...]
#
# full (the default here) is the size docs/reliability.md reports; short is what `make test` runs
# (tests/chaos/test_chaos.sh, inside the integration cluster). NAMEs pick scripts
# (chaos_NAME.sh); none means all. GS_KEEP_CLUSTER=1 leaves the cluster up; with a cluster already up
# in GS_CLUSTER_DIR (its env file present) that one is used and left up.
set -u
B=${1:-build}
size=${2:-full}
shift $(($# > 2 ? 2 : $#))
cd "$(dirname "$0")/../.." || exit 1
export GS_BUILD="$B" GS_CHAOS_SIZE="$size"
export GS_CLUSTER_DIR=${GS_CLUSTER_DIR:-$PWD/$B/cluster}
export GS_APISERVER_AUDIT=1
GS_RESULTS=$(mktemp)
export GS_RESULTS
trap 'rm -f "$GS_RESULTS"' EXIT
status=0

scripts=()
if [ $# -gt 0 ]; then
	for n in "$@"; do scripts+=("tests/chaos/chaos_$n.sh"); done
else
	scripts=(tests/chaos/chaos_*.sh)
fi

own=0
if [ ! -f "$GS_CLUSTER_DIR/env" ]; then
	if tests/cluster/cluster.sh up; then
		own=1
	else
		echo "FAIL chaos: tests/cluster/cluster.sh up failed" | tee -a "$GS_RESULTS"
		status=1
	fi
fi
if [ -f "$GS_CLUSTER_DIR/env" ]; then
	for t in "${scripts[@]}"; do
		echo "=== $t ($size)"
		t0=$SECONDS
		bash "$t" || status=1
		echo "  ($((SECONDS - t0)) s)"
	done
fi
if [ $own = 1 ] && [ "${GS_KEEP_CLUSTER:-0}" != 1 ]; then
	tests/cluster/cluster.sh down || status=1
fi

tests/results.sh "$GS_RESULTS" || status=1
exit $status
