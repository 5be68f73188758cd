#!/usr/bin/env bash
# Runs one libFuzzer harness for a while over its working corpus and prints one line about it:
#
#   tests/fuzz/run.sh NAME SECONDS DICT [SEED...]
#
# The binary is $GS_FUZZ_DIR/fuzz_NAME (build-fuzz/ by default, built by `make fuzz`). The working
# corpus $GS_FUZZ_DIR/corpus/NAME/ is seeded (files never overwritten) from tests/fuzz/corpus/NAME/ and
# the SEED files, and keeps what the fuzzer finds from one run to the next. DICT may be empty. The
# fuzzer's output goes to $GS_FUZZ_DIR/logs/NAME.log, a crashing input to $GS_FUZZ_DIR/crashes/NAME/.
# Prints executions, wall time, coverage (libFuzzer's cov: edges, ft: features) and "0 crashes" or the
# crash file; exits non-zero on a crash (also a leak, a timeout, an out-of-memory); a run stopped by
# SIGINT says "interrupted, 0 crashes" and exits 0. GS_FUZZ_RUNS=N stops the run after N executions
# (libFuzzer's -runs) if SECONDS have not run out first.
set -u
name=$1 secs=$2 dict=$3
shift 3
dir=${GS_FUZZ_DIR:-build-fuzz}
bin=$dir/fuzz_$name
corpus=$dir/corpus/$name
crashes=$dir/crashes/$name
log=$dir/logs/$name.log
mkdir -p "$corpus" "$crashes" "$dir/logs"

if [ -d "tests/fuzz/corpus/$name" ]; then
	for f in "tests/fuzz/corpus/$name"/*; do
		[ -f "$f" ] && cp -n "$f" "$corpus/"
	done
fi
for f in "$@"; do
	[ -f "$f" ] && cp -n "$f" "$corpus/"
done

args=(-max_total_time="$secs" -timeout="${GS_FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -print_final_stats=1
	-artifact_prefix="$crashes/")
[ -n "$dict" ] && args+=(-dict="$dict")
[ -n "${GS_FUZZ_RUNS:-}" ] && args+=(-runs="$GS_FUZZ_RUNS")
start=$(date +%s.%N)
"$bin" "${args[@]}" "$corpus" >"$log" 2>&1
rc=$?
end=$(date +%s.%N)

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
cov=$(grep -oE '(DONE|pulse|NEW|REDUCE|INITED|RELOAD) +cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 | grep -oE 'cov: [0-9]+ ft: [0-9]+')
files=$(find "$corpus" -type f | wc -l)
wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }')
crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)

rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
line=$(printf 'fuzz %-12s %11s execs in %4ss (%s/s), %s, corpus %s' "$name" "${execs:-?}" "$wall" "${rate:-?}" \
	"${cov:-cov: ?}" "$files")
if [ "$rc" -eq 0 ] && [ -z "$crash" ]; then
	echo "$line: 0 crashes"
	exit 0
fi
# Stopped by SIGINT (libFuzzer exits 72 after "run interrupted"): nothing found, say so.
if [ -z "$crash" ] && grep -q 'libFuzzer: run interrupted' "$log"; then
	echo "$line: interrupted, 0 crashes"
	exit 0
fi
echo "$line: CRASH ${crash:-(exit $rc, no test unit written)}; log $log"
grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz_[a-z_]+: )' "$log" | head -n 5 | sed 's/^/    /'
exit 1
