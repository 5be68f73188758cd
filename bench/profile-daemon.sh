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
# Memory instead of CPU: GS_PROFILE_MEM=1 runs no perf; it samples the daemon's VmRSS every 50 ms into
# rss-ENC.tsv (milliseconds since the daemon started, KiB) and its smaps_rollup every 500 ms into
# smaps-ENC.txt (the last one before it exited: where the resident pages are, anonymous or file). With
# GS_HEAPTRACK=1 the daemon runs under heaptrack instead (heaptrack-ENC.*.zst, read with
# heaptrack_print): the bench's CPU and RSS figures are then heaptrack's, not the daemon's.
# GS_PROFILE_LIST=N first times N lists of every pod as the daemon's first list asks for them
# (resourceVersion=0, in the run's encoding) with curl, into list-ENC.tsv (seconds to the first byte and in all,
# bytes): what the apiserver alone takes to answer it. They delay the daemon's start, so the bench's
# "ready s" and "seconds" of that run include them: read the daemon's log for its own ready time.
# GS_PROFILE_WATCHLIST=N then times N watch-list streams of every pod (KEP-3157: watch=1 with
# sendInitialEvents=true, resourceVersionMatch=NotOlderThan; on by default from 1.34), in the run's
# encoding, up to the bookmark annotated k8s.io/initial-events-end, into watchlist-ENC.tsv (seconds,
# bytes): what the same state costs as a stream, for docs/performance.md's "Watch-list".
#
# GS_PROFILE_HZ: perf's sampling frequency (499).
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
list_accept='application/json'
[ "$enc" = protobuf ] && list_accept='application/vnd.kubernetes.protobuf'
dir=${GS_CLUSTER_DIR:-build/bench-cluster}
for _ in $(seq 1 "${GS_PROFILE_LIST:-0}"); do
	curl -sS -o /dev/null --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" \
		-H "Accept: $list_accept" -w '%{time_starttransfer}\t%{time_total}\t%{size_download}\n' \
		"https://127.0.0.1:${GS_APISERVER_PORT:-18443}/api/v1/pods?resourceVersion=0" >>"$out/list-$enc.tsv"
done
accept='application/json'
[ "$enc" = protobuf ] && accept='application/vnd.kubernetes.protobuf;stream=watch'
for _ in $(seq 1 "${GS_PROFILE_WATCHLIST:-0}"); do
	fifo=$(mktemp -u)
	mkfifo "$fifo"
	t0=$(date +%s%N)
	curl -sS -N --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" -H "Accept: $accept" \
		"https://127.0.0.1:${GS_APISERVER_PORT:-18443}/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=300" \
		>"$fifo" 2>/dev/null &
	cpid=$!
	# The bytes up to the bookmark's line; the stream stays open after it, so curl is stopped then.
	n=$(LC_ALL=C sed -n '/k8s.io\/initial-events-end/q;p' <"$fifo" | wc -c)
	t1=$(date +%s%N)
	kill "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null
	rm -f "$fifo"
	printf '%d.%03d\t%s\n' $(((t1 - t0) / 1000000000)) $((((t1 - t0) / 1000000) % 1000)) "$n" >>"$out/watchlist-$enc.tsv"
done
if [ "${GS_HEAPTRACK:-0}" = 1 ]; then
	# heaptrack runs the daemon as its child: the bench's SIGTERM must reach the daemon, or it outlives
	# the run (holding whatever its parent held, a flock included). Its own process group, signalled whole.
	setsid heaptrack -o "$out/heaptrack-$enc" "$daemon" "$@" &
	hp=$!
	trap 'kill -TERM -- -$hp 2>/dev/null' TERM INT
	wait $hp
	wait $hp
	exit
fi
if [ "${GS_PROFILE_MEM:-0}" = 1 ]; then
	pid=$$
	(
		t0=$(date +%s%N)
		n=0
		: >"$out/rss-$enc.tsv"
		while [ -r "/proc/$pid/status" ]; do
			rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || break
			[ -n "$rss" ] && echo "$((($(date +%s%N) - t0) / 1000000))	$rss" >>"$out/rss-$enc.tsv"
			if [ $((n % 10)) = 0 ]; then
				cat "/proc/$pid/smaps_rollup" >"$out/smaps-$enc.tmp" 2>/dev/null &&
					mv "$out/smaps-$enc.tmp" "$out/smaps-$enc.txt"
			fi
			n=$((n + 1))
			sleep 0.05
		done
	) &
	exec "$daemon" "$@"
fi
kc=${GS_CLUSTER_DIR:-build/bench-cluster}/kubeconfig
if [ "${GS_APISERVER_PROFILING:-0}" = 1 ]; then
	(kubectl --kubeconfig "$kc" get --raw "/debug/pprof/profile?seconds=$secs" >"$out/apiserver-$enc.pprof" \
		2>"$out/apiserver-$enc.err" &)
fi
(perf record -q -F "${GS_PROFILE_HZ:-499}" --call-graph dwarf,8192 -p $$ -o "$out/daemon-$enc.data" -- sleep "$secs" \
	>/dev/null 2>&1 &)
# GS_PROFILE_SYSCALLS=1: the daemon's system calls by kind over the same seconds (perf stat on the
# syscalls tracepoints), into syscalls-ENC.txt.
if [ "${GS_PROFILE_SYSCALLS:-0}" = 1 ]; then
	ev=raw_syscalls:sys_enter
	for c in read write writev readv epoll_wait epoll_pwait epoll_ctl recvfrom sendto sendmsg recvmsg \
		clock_gettime mmap munmap brk mremap madvise ioctl futex accept4 close; do
		ev="$ev,syscalls:sys_enter_$c"
	done
	(perf stat -e "$ev" -p $$ -o "$out/syscalls-$enc.txt" -- sleep "$secs" >/dev/null 2>&1 &)
fi
exec "$daemon" "$@"
