#!/usr/bin/env bash
# Runs the cmocka unit test binaries given as arguments and counts their tests.
#   tests/run-unit.sh build/tests/test_*        GS_VALGRIND=1 runs each under valgrind
# Appends "PASS name" / "FAIL name" lines to $GS_RESULTS when set; prints "N passed, N failed" and
# exits non-zero if anything failed (a binary that crashes or exits non-zero counts as a failure).
set -u
passed=0
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for bin in "$@"; do
	name=$(basename "$bin")
	if [ "${GS_VALGRIND:-0}" = 1 ]; then
		valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
			--suppressions=tests/valgrind.supp "$bin" >"$out" 2>&1
	else
		"$bin" >"$out" 2>&1
	fi
	rc=$?
	ok=$(grep -c '^\[       OK \]' "$out")
	# cmocka names a failed test twice (where it fails and in its summary): count names, not lines.
	bad=$(grep -E '^\[  FAILED  \] ' "$out" | grep -v 'test(s)' | sort -u | grep -c .)
	if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
		bad=1 # crashed, leaked or exited non-zero outside a test
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	if [ "$rc" -ne 0 ] || [ "$bad" -ne 0 ]; then
		echo "--- $name (exit $rc) ---"
		tail -n 40 "$out"
	fi
	printf '%-28s %3d passed, %d failed\n' "$name" "$ok" "$bad"
	if [ -n "${GS_RESULTS:-}" ]; then
		grep '^\[       OK \]' "$out" | sed "s/^\[       OK \] */PASS $name:/" >>"$GS_RESULTS"
		if [ "$bad" -ne 0 ]; then
			echo "FAIL $name: see the log above" >>"$GS_RESULTS"
		fi
	fi
done
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
