#!/usr/bin/env bash
# tests/results.sh RESULTS_FILE: the end of a test run (tests/run-all.sh, tests/chaos/run.sh): lists the
# FAIL lines, then prints "N passed, N failed" as the last line. Exits 1 when a check failed or none ran.
f=$(grep -c '^FAIL ' "$1")
p=$(grep -c '^PASS ' "$1")
status=0
if [ "$f" -gt 0 ]; then
	echo "Failures:"
	grep '^FAIL ' "$1"
	status=1
fi
if [ "$p" -eq 0 ]; then
	echo "no test ran"
	status=1
fi
echo "$p passed, $f failed"
exit $status
