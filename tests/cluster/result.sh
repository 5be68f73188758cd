# shellcheck shell=bash
# Results for the cluster scripts' own tests (tests/cluster/test_*.sh), which need no namespace and
# often no cluster, so not tests/lib.sh: sourced after setting TEST_NAME.
#   result ok|fail WHAT [WHY]   prints the line, appends "PASS|FAIL TEST_NAME: WHAT[: WHY]" to $GS_RESULTS
#   result_end                  standalone (no GS_RESULTS) prints "N passed, N failed"; 0 when none failed
passed=0
failed=0
result() {
	if [ "$1" = ok ]; then
		passed=$((passed + 1))
		echo "  ok    $2"
		[ -z "${GS_RESULTS:-}" ] || echo "PASS $TEST_NAME: $2" >>"$GS_RESULTS"
	else
		failed=$((failed + 1))
		echo "  FAIL  $2: $3"
		[ -z "${GS_RESULTS:-}" ] || echo "FAIL $TEST_NAME: $2: $3" >>"$GS_RESULTS"
	fi
}
result_end() {
	[ -n "${GS_RESULTS:-}" ] || echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}
