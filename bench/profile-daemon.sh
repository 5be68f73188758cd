#!/usr/bin/env bash
# bench/profile-daemon.sh: a --daemon for gpu-scheduler-bench that profiles without changing what the
# bench measures. It starts, in the background, `perf record -p` on its own PID (DWARF call graphs,
# 499 Hz) and, when the apiserver serves /debug/pprof (tests/cluster/cluster.sh with
# GS_APISERVER_PROFILING=1), the apiserver's Go CPU profile, both for $GS_PROFILE_SECONDS (20), then
# execs build/gpu-scheduler (or $GS_PERF_DAEMON) in its place: the PID the bench watches is the
# daemon's, so its CPU, RSS and bytes read stay the daemon's own (perf adds its sampling interrupts).
# Output in $GS_PERF_OUT (build/perf): daemon-ENC.data and apiserver-ENC.pprof, ENC being protobuf or
# json from the daemon's --kube-api-content-type.
#
#   GS_APISERVER_PROFILING=1 GS_PERF_DAEMON=build/gpu-scheduler bench/bench.sh --nodes 1000 \
#       --pods 10000 --daemon bench/profile-daemon.sh --out build/bench-prof
#   perf report -i build/perf/daemon-protobuf.data --no-children --sort dso,symbol
#   go tool pprof -top build/perf/apiserver-protobuf.pprof     (Go 1.19: /usr/lib/go-1.19/bin/go)
#
# bench/perf-daemon.sh is the heavier variant (the daemon under perf from its first instruction, the
# apiserver by perf, whose stripped Kubernetes binaries leave Go symbols unnamed).
out=${GS_PERF_OUT:-build/perf}
secs=${GS_PROFILE_SECONDS:-20}
daemon=${GS_PERF_DAEMON:-build/gpu-scheduler}
enc=protobuf
for a in "$@"; do
	[ "$a" = --kube-api-content-type=json ] && enc=json
done
mkdir -p "$out"
kc=${GS_CLUSTER_DIR:-build/bench-cluster}/kubeconfig
if [ "${GS_APISERVER_PROFILING:-0}" = 1 ]; then
	(kubectl --kubeconfig "$kc" get --raw "/debug/pprof/profile?seconds=$secs" >"$out/apiserver-$enc.pprof" \
		2>"$out/apiserver-$enc.err" &)
fi
(perf record -q -F 499 --call-graph dwarf,8192 -p $$ -o "$out/daemon-$enc.data" -- sleep "$secs" >/dev/null 2>&1 &)
exec "$daemon" "$@"
