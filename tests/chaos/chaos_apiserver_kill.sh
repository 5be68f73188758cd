#!/usr/bin/env bash
# Chaos: kube-apiserver killed with SIGKILL and restarted KILLS times while the daemon binds a burst of
# N pending pods (full: 5,000 pods, 5 kills; short: 500, 2). Each kill lands at a fixed share of the
# burst (after k*N/(KILLS+1) successful bindings), while bindings are in flight.
# Asserts: every pod ends bound to the node and devices its map names; the apiserver's audit log (kept
# across restarts) shows one binding that took effect per pod and none twice; every 409 is explained (a
# binding whose answer was lost in the kill, retried, and refused because the pod is already on the
# node we asked: the daemon counts it as bound, result="already_bound"), none forgotten as "gone".
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
test_begin

N=$(size 500 5000)
KILLS=$(size 2 5)
# The daemon's client rate, so that the burst lasts long enough for the kills to land inside it. The
# short size also keeps the burst allowance small: with 100, the tokens saved while the apiserver was
# down let the daemon bind the rest of 500 pods in a second after the restart, before the next kill.
QPS=$(size 50 250)
BURST=$(size 5 250)
AUDIT_LOG=$GS_CLUSTER_DIR/logs/audit.log

check "the apiserver writes the binding audit log (GS_APISERVER_AUDIT=1)" \
	grep -q -- '--audit-log-path' "$GS_CLUSTER_DIR/kube-apiserver.cmd"
chaos_nodes_make 10 || { fail "nodes" "cannot create them"; exit 1; }
t=$SECONDS
check "$N pending pods created" chaos_pods create "$NS" p 0 "$N" "$CHAOS_NODES"
chaos_note "$N pods created in $((SECONDS - t)) s"

daemon_start --require-env=false --kube-api-qps "$QPS" --kube-api-burst "$BURST" || exit 1

bound() { kube_metric gpu_scheduler_binding_attempts_total 'result="(success|already_bound)"'; }
bound_at_least() { [ "$(bound)" -ge "$1" ]; }
# Bindings this apiserver incarnation answered (any namespace, any code): its counter starts at 0 with
# each start, so the figure is summed over the incarnations, each read just before its kill.
apiserver_bindings() {
	apiserver_metrics | awk '/^apiserver_request_total\{/ && /resource="pods"/ && /subresource="binding"/ && /verb="POST"/ { s += $2 } END { printf "%d\n", s }'
}

t0=$SECONDS
api_sum=0
mid=0
for ((k = 1; k <= KILLS; k++)); do
	target=$((k * N / (KILLS + 1)))
	wait_for "$target bindings" 300 bound_at_least "$target" || { fail "kill $k" "$(bound) bindings, never $target"; break; }
	at=$(bound)
	inflight=$(kube_metric gpu_scheduler_bindings_inflight)
	api_sum=$((api_sum + $(apiserver_bindings)))
	if ! kill_apiserver; then
		fail "kill $k: the apiserver restarts" "see $GS_CLUSTER_DIR/logs/kube-apiserver.log"
		exit 1
	fi
	echo "  kill $k: at $at of $N bound, $inflight in flight, $((SECONDS - t0)) s into the burst"
	[ "$at" -lt "$N" ] && [ "$inflight" -gt 0 ] && mid=$((mid + 1))
done
check "all $KILLS kills landed mid-burst (pods left to bind, bindings in flight)" test "$mid" = "$KILLS"
check_eventually "every pod bound to the node and devices its map names" 600 \
	chaos_pods verify "$NS" p "$CHAOS_NODES" --count "$N"
chaos_note "$N pods bound through $KILLS SIGKILLs of the apiserver in $((SECONDS - t0)) s"
check "the daemon survived" daemon_alive
api_sum=$((api_sum + $(apiserver_bindings)))

# What the daemon says it sent and got.
ok=$(kube_metric gpu_scheduler_binding_attempts_total 'result="success"')
already=$(kube_metric gpu_scheduler_binding_attempts_total 'result="already_bound"')
gone=$(kube_metric gpu_scheduler_binding_attempts_total 'result="gone"')
retry=$(kube_metric gpu_scheduler_binding_attempts_total 'result="retry"')
rejected=$(kube_metric gpu_scheduler_binding_attempts_total 'result="rejected"')
sent=$((ok + already + gone + retry + rejected))
restarts=$(kube_metric gpu_scheduler_watch_restarts_total)
# What the apiserver logged, over all its lives.
eval "$(python3 "$GS_ROOT/tests/tools/audit.py" "$AUDIT_LOG" "$NS" p "$N")"
chaos_note "daemon: $sent binding requests: $ok 201, $already 409 already bound to our node, $gone gone, $retry retried (transport/5xx), $rejected rejected; $restarts watch restarts"
chaos_note "apiserver audit log: $AUDIT_POSTS binding POSTs completed: $AUDIT_201 x 201, $AUDIT_409 x 409, $AUDIT_OTHER other; $AUDIT_PODS_201 pods with a 201, $AUDIT_409_ONLY with only a 409, $AUDIT_UNRECORDED with none; apiserver_request_total summed over the $((KILLS + 1)) lives, read before each kill: $api_sum"

check "no pod bound twice (audit log: no pod with two 201s)" test "$AUDIT_TWICE" = 0
check "one binding took effect per pod: pods with a 201 + with only a 409 + with no record = $N" \
	test $((AUDIT_PODS_201 + AUDIT_409_ONLY + AUDIT_UNRECORDED)) = "$N"
check "the daemon counted every 201 it received as success, at most one per pod" test "$ok" -le "$AUDIT_201"
check "no binding forgotten as gone (every 409 was an already-bound pod on our node)" test "$gone" = 0
check "no binding rejected" test "$rejected" = 0
check "every 409 the apiserver sent reached the daemon as already_bound, or died with the apiserver" \
	test "$already" -le "$AUDIT_409"
# unexplained NAME,NAME...: the pods among these with no failed binding attempt in the daemon's log.
unexplained() {
	local p names
	IFS=, read -ra names <<<"$1"
	for p in "${names[@]}"; do
		grep -q "pod $NS/$p: binding failed" "$DAEMON_LOG" || printf ' %s' "$p"
	done
}
# Each 409 is explained: the same pod's earlier attempt failed in the kill (transport error or 5xx).
check "each 409 follows a failed attempt of the same pod (its answer lost in a kill)" \
	test -z "$(unexplained "$AUDIT_409_NAMES")"
# A pod with no record at all: its binding took effect as the apiserver died, before the audit line.
check "each pod missing from the audit log had its binding cut by a kill" test -z "$(unexplained "$AUDIT_UNRECORDED_NAMES")"
check "the watches were restarted after the kills" test "$restarts" -ge "$KILLS"
test_end
