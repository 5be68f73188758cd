#!/usr/bin/env bash
# bench/perf-daemon.sh: a --daemon for gpu-scheduler-bench that profiles what it runs. It starts
# build/gpu-scheduler (or $GS_PERF_DAEMON) under `perf record` with DWARF call graphs, and the
# apiserver of $GS_CLUSTER_DIR (which bench/bench.sh exports) under a second `perf record`
# for as long as the daemon lives; the bench's SIGTERM goes to the daemon, then both profiles are
# written to $GS_PERF_OUT (build/perf): daemon.data, apiserver.data.
#
#   bench/bench.sh --nodes 1000 --pods 5000 --contenders gpu-scheduler \
#       --daemon bench/perf-daemon.sh --out build/bench-perf
#   perf report -i build/perf/daemon.data --no-children --sort symbol
#
# The bench's CPU and RSS columns then describe this script, not the daemon: profile runs give
# profiles, not figures.
set -u
out=${GS_PERF_OUT:-build/perf}
daemon=${GS_PERF_DAEMON:-build/gpu-scheduler}
mkdir -p "$out"
api=$(cat "${GS_CLUSTER_DIR:-build/bench-cluster}/pids/kube-apiserver.pid" 2>/dev/null || true)
ap=
if [ -n "$api" ]; then
	perf record -q -F 499 -g -p "$api" -o "$out/apiserver.data" 2>"$out/perf-apiserver.log" &
	ap=$!
fi
perf record -q -F 999 --call-graph dwarf,16384 -o "$out/daemon.data" -- "$daemon" "$@" &
dp=$!
stop() {
	kill -TERM $(pgrep -P "$dp") 2>/dev/null
}
trap stop TERM INT
wait "$dp"
wait "$dp" 2>/dev/null
if [ -n "$ap" ]; then
	kill -INT "$ap" 2>/dev/null
	wait "$ap" 2>/dev/null
fi
