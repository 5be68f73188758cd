#!/usr/bin/env bash
# The whole test run behind `make test`: unit tests, then the integration tests against a real
# kube-apiserver + etcd + kube-controller-manager started by tests/cluster/cluster.sh.
#   tests/run-all.sh BUILD_DIR [unit|integration|all]
# Ends with one line "N passed, N failed" over everything that ran.
set -u
B=${1:-build}
what=${2:-all}
cd "$(dirname "$0")/.."
export GS_BUILD="$B"
GS_RESULTS=$(mktemp)
export GS_RESULTS
trap 'rm -f "$GS_RESULTS"' EXIT
status=0

if [ "$what" != integration ]; then
	# Only the test programs: their dependency files (.d) sit beside them.
	mapfile -t units < <(find "$B/tests" -maxdepth 1 -type f -name 'test_*' ! -name '*.*' -perm -u+x | sort)
	tests/run-unit.sh "${units[@]}" || status=1
fi

if [ "$what" != unit ]; then
	export GS_CLUSTER_DIR=${GS_CLUSTER_DIR:-$PWD/$B/cluster}
	if tests/cluster/cluster.sh up; then
		for t in tests/integration/test_*.sh; do
			[ -n "${GS_ONLY:-}" ] && [[ "$t" != *"$GS_ONLY"* ]] && continue
			echo "=== $t"
			bash "$t" || status=1
		done
	else
		echo "FAIL cluster: tests/cluster/cluster.sh up failed" >>"$GS_RESULTS"
		status=1
	fi
	[ "${GS_KEEP_CLUSTER:-0}" = 1 ] || tests/cluster/cluster.sh down || status=1
fi

p=$(grep -c '^PASS ' "$GS_RESULTS")
f=$(grep -c '^FAIL ' "$GS_RESULTS")
if [ "$f" -gt 0 ]; then
	echo "Failures:"
	grep '^FAIL ' "$GS_RESULTS"
	status=1
fi
if [ "$p" -eq 0 ]; then
	echo "no test ran"
	status=1
fi
echo "$p passed, $f failed"
exit $status
