#!/usr/bin/env bash
# TLS session resumption towards the apiserver (src/core/tls.h, docs/sched.md "Metrics"): the daemon's
# connections resume the session of its first full handshake from the apiserver's session ticket, as
# gpu_scheduler_apiserver_tls_handshakes_total{resumed} counts. A burst of pending pods makes the pool
# open many connections at once; nearly all of them resume. After an apiserver restart (new ticket keys)
# the saved ticket is refused: the daemon falls back to full handshakes, verified, and resumes again.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

hs() { metric "gpu_scheduler_apiserver_tls_handshakes_total{resumed=\"$1\"}"; }
map_lines() { local i; for ((i = 0; i < $1; i++)); do echo "$i=node$((i % 4 + 1)):$((i % 4))"; done; }

# bound PREFIX N: all N pods PREFIX-i are on a node.
bound() {
	[ "$(kc get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' |
		awk -v p="$2-" 'index($1, p) == 1 && $2 != "" { n++ } END { print n + 0 }')" -ge "$1" ]
}

# make_pods PREFIX N: N bare pods that may share GPUs (each is its own owner), created in one request.
make_pods() {
	local list=$GS_TEST_LOGS/$T_NAME-$1.yaml i
	mapfile -t MAP < <(map_lines "$2")
	mkdir -p "$GS_TEST_LOGS"
	for ((i = 0; i < $2; i++)); do
		echo ---
		POD_ANNOTATIONS='    gpu-scheduler.io/allow-shared-devices: "true"' pod_yaml "$1-$i" "${MAP[@]}"
	done >"$list"
	kc create -f "$list" >/dev/null
}

# --- a burst at the start ----------------------------------------------------------------------------
make_pods burst 300
check "300 pods created before the daemon starts" pod_count_is 300
daemon_start --require-env=false || exit 1
check_eventually "all 300 bound" 120 bound 300 burst
full=$(hs false)
resumed=$(hs true)
echo "  handshakes after the burst: $full full, $resumed resumed"
check "connections resumed the apiserver's session" test "$resumed" -gt 0
# The first lists and watches start together, before any handshake completes: those few are full.
check "full handshakes are few (<= 4)" test "$full" -le 4
check "most connections resumed" test "$resumed" -gt $((4 * full))
check "no connection failed" eval '! grep -E "http [^ ]+: conn [0-9]+ failed" "$DAEMON_LOG"'

# --- the apiserver restarted: its ticket keys are new ---------------------------------------------------
check "apiserver restarted" restart_apiserver
check_eventually "ready again after the apiserver restart" 60 eval '[ "$(daemon_http /readyz)" = ok ]'
make_pods again 100
check_eventually "the next 100 pods bound" 120 bound 100 again
full2=$(hs false)
resumed2=$(hs true)
echo "  handshakes after the restart: $full2 full, $resumed2 resumed"
check "the refused ticket fell back to a full handshake" test "$full2" -gt "$full"
check "then the connections resumed the new session" test "$resumed2" -gt "$resumed"
check "full handshakes after the restart are few (<= 8 more)" test $((full2 - full)) -le 8
# (connections failed while the apiserver was down; none was a refused certificate)
check "no certificate was refused" eval '! grep -E "http [^ ]+: conn [0-9]+ failed: .*(certificate|permission denied)" "$DAEMON_LOG"'
daemon_stop TERM 15 && pass "SIGTERM: exit 0"
force_delete_pods
check_eventually "pods gone" 60 pod_count_is 0
test_end
