#!/usr/bin/env bash
# Chaos: etcd compacted while the daemon's pod watch is behind, so that the watch it opens next is
# answered 410 Gone; the daemon must relist and miss nothing. Full: 2,000 pods bound, then 2,000 more
# created and 1,000 of the first deleted while it is away; short: 200, 200, 100.
#
# How the watch is made to come back from an old resourceVersion, reliably: the daemon is frozen
# (SIGSTOP) and kube-apiserver killed and restarted at once, so the daemon's resourceVersion R stays
# where it was (a frozen process still receives: without the kill, the events of the churn would wait
# in its socket buffer and it would simply catch up); pods are created and deleted; etcd is compacted at
# its current revision (through its v3 HTTP gateway: POST /v3/kv/compaction, physical); kube-apiserver is
# killed and restarted again, so its watch cache, the only copy of the events after R that etcd no longer
# holds, starts again from a list after the compaction; the daemon is resumed, finds its connections gone
# and watches again from R: the apiserver cannot serve R (410 "too old resource version"), and the daemon
# relists (gpu_scheduler_relists_total, "listing again" in its log).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
test_begin

A=$(size 200 2000)
B=$(size 200 2000)
D=$((A / 2))
ETCD=http://127.0.0.1:$GS_ETCD_PORT

# etcd's current revision (the v3 gateway answers int64 as strings).
etcd_revision() {
	curl -sf -X POST "$ETCD/v3/kv/range" -d '{"key":"Lw==","limit":1,"keys_only":true}' |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])'
}
bound_pods() { kube_metric gpu_scheduler_bound_pods; }

chaos_nodes_make 10 || { fail "nodes" "cannot create them"; exit 1; }
daemon_start --require-env=false || exit 1
daemon_ready 60 || { fail "daemon ready" "not within 60 s"; exit 1; }
base=$(bound_pods)
check "$A pods created" chaos_pods create "$NS" p 0 "$A" "$CHAOS_NODES"
check_eventually "all $A bound where mapped" 300 chaos_pods verify "$NS" p "$CHAOS_NODES" --count "$A"
check_eventually "the daemon counts them bound (its watch saw them)" 60 eval "[ \$(bound_pods) -eq $((base + A)) ]"
relists0=$(kube_metric gpu_scheduler_relists_total 'resource="pods"')

# --- the daemon away: churn, compaction, a new watch cache ---------------------------------------
kill -STOP "$DAEMON_PID"
defer "kill -CONT $DAEMON_PID 2>/dev/null; true"
t0=$SECONDS
rev0=$(etcd_revision)
check "kube-apiserver killed and restarted: the frozen daemon's connections are cut" kill_apiserver
check "$B more pods created while the daemon is frozen" chaos_pods create "$NS" p "$A" "$B" "$CHAOS_NODES"
check "$D of the first pods deleted meanwhile" chaos_pods delete "$NS" p 0 "$D"
rev=$(etcd_revision)
check "etcd compacted at revision $rev (was $rev0 when the daemon froze)" \
	curl -sf -X POST "$ETCD/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}"
check "etcd no longer serves the daemon's revision" \
	eval "curl -s -X POST $ETCD/v3/kv/range -d '{\"key\":\"Lw==\",\"limit\":1,\"revision\":\"$rev0\"}' | grep -q 'compacted'"
check "kube-apiserver killed and restarted again (its watch cache starts after the compaction)" kill_apiserver
kill -CONT "$DAEMON_PID"
chaos_note "daemon away $((SECONDS - t0)) s: $B pods created, $D deleted, etcd compacted at $rev (daemon at <= $rev0)"

t1=$SECONDS
check_eventually "the daemon relisted pods" 120 \
	eval "[ \$(kube_metric gpu_scheduler_relists_total 'resource=\"pods\"') -gt $relists0 ]"
check "its log says why: 410 Gone" grep -qE 'pods: watch (resourceVersion too old \(410 Gone\)|answered 410 Gone); listing again' "$DAEMON_LOG"
check_eventually "every pod bound where mapped, the deleted ones gone" 300 \
	chaos_pods verify "$NS" p "$CHAOS_NODES" --count $((A + B)) --absent "0:$D"
check_eventually "the daemon's count of bound pods is exact: it missed no creation and no deletion" 60 \
	eval "[ \$(bound_pods) -eq $((base + A - D + B)) ]"
chaos_note "relist after 410 and $B new pods bound in $((SECONDS - t1)) s; relists: $(kube_metric gpu_scheduler_relists_total 'resource="pods"'), watch restarts: $(kube_metric gpu_scheduler_watch_restarts_total 'resource="pods"')"
check "the daemon survived" daemon_alive
test_end
