#!/usr/bin/env bash
# gpu-scheduler-check, the test service: prints its node and CUDA_VISIBLE_DEVICES, "unset" when the
# variable is missing, every --interval (or CHECK_INTERVAL) seconds, and ends promptly on SIGTERM.
# Needs no cluster.
. "$(dirname "$0")/../lib.sh"
trap test_exit EXIT
bin=$GS_BUILD_DIR/gpu-scheduler-check
out=$(NODE_NAME=node3 CUDA_VISIBLE_DEVICES=0,1,2 "$bin" --once)
check "--once prints node and devices" grep -qE '^[0-9T:-]+Z node=node3 CUDA_VISIBLE_DEVICES=0,1,2' <<<"$out"
out=$(env -u CUDA_VISIBLE_DEVICES NODE_NAME=node4 "$bin" --once)
check "an unset variable says so" grep -q 'node=node4 CUDA_VISIBLE_DEVICES=unset' <<<"$out"
out=$(env -u NODE_NAME CUDA_VISIBLE_DEVICES=3 "$bin" --once)
check "without NODE_NAME, the hostname" grep -q "node=$(hostname) " <<<"$out"
log=$(mktemp)
NODE_NAME=node1 CUDA_VISIBLE_DEVICES=0 CHECK_INTERVAL=1 "$bin" >"$log" &
pid=$!
sleep 2.5
t0=$(date +%s%N)
kill -TERM $pid
wait $pid
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "a line every CHECK_INTERVAL second ($(grep -c . "$log") in 2.5 s)" test "$(grep -c 'node=node1 CUDA_VISIBLE_DEVICES=0' "$log")" -ge 2
check "SIGTERM: exit 0" test "$rc" = 0
check "SIGTERM: within 500 ms ($ms ms)" test "$ms" -lt 500
rm -f "$log"
check "a bad interval is refused" eval '! "$bin" --interval 0 >/dev/null 2>&1'
