#!/usr/bin/env bash
# Waiting with a reason, and waking up on the event that removes it: a node that does not exist yet
# (bound within a second of its creation), a cordoned node, a NotReady node, a node that advertises
# fewer nvidia.com/gpu than the device the map names.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

N5=gs-late-$(printf '%04x' $RANDOM)
defer "node_delete $N5"

daemon_start --require-env=false || exit 1
check "daemon ready" daemon_ready 30

# --- a missing node --------------------------------------------------------------------------------
kc apply -f - >/dev/null <<<"$(pod_yaml late-0 "0=$N5:0,1")"
check_eventually "missing node: FailedScheduling names it" 20 pod_event_has late-0 "FailedScheduling: .*$N5"
check_eventually "missing node: PodScheduled=False Unschedulable" 10 eval '[ "$(pod_condition late-0)" = "False Unschedulable" ]'
check "missing node: not bound" test -z "$(pod_node late-0)"

# Watch the pod, stamping each change, then create the node: the bind must follow within a second.
stamps=$GS_TEST_LOGS/$T_NAME-late-0.stamps
kc get pod late-0 -w -o jsonpath='{.spec.nodeName}{"\n"}' 2>/dev/null |
	while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >"$stamps" &
watcher=$!
defer "kill $watcher 2>/dev/null || true"
sleep 1
t0=$(date +%s.%N)
node_make "$N5"
check_eventually "node created: pod bound to it" 10 pod_on late-0 "$N5"
sleep 0.3
t1=$(awk -v n="$N5" '$2 == n { print $1; exit }' "$stamps")
kill $watcher 2>/dev/null
if [ -n "$t1" ]; then
	lat=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	check "bound ${lat}s after the node was created (<= 1 s)" awk -v l="$lat" 'BEGIN { exit !(l <= 1.0) }'
else
	fail "bind latency after node creation" "no watch line with $N5 in $stamps"
fi

# --- a cordoned node -------------------------------------------------------------------------------
kc cordon node2 >/dev/null
defer "kc uncordon node2 >/dev/null"
kc apply -f - >/dev/null <<<"$(pod_yaml cordon-1 '1=node2:3')"
check_eventually "cordoned node: FailedScheduling says so" 20 pod_event_has cordon-1 'FailedScheduling: .*(cordon|unschedulable)'
check "cordoned node: not bound" test -z "$(pod_node cordon-1)"
kc uncordon node2 >/dev/null
check_eventually "uncordoned: bound at once" 5 pod_on cordon-1 node2

# --- a NotReady node --------------------------------------------------------------------------------
node_set_ready "$N5" False
kc apply -f - >/dev/null <<<"$(pod_yaml notready-0 "0=$N5:2")"
check_eventually "NotReady node: FailedScheduling says so" 20 pod_event_has notready-0 'FailedScheduling: .*(NotReady|not [Rr]eady)'
check "NotReady node: not bound" test -z "$(pod_node notready-0)"
node_set_ready "$N5" True
check_eventually "Ready again: bound at once" 5 pod_on notready-0 "$N5"

# --- a device the node does not have ------------------------------------------------------------------
node_gpus() {
	api PATCH "/api/v1/nodes/$1/status" "{\"status\":{\"capacity\":{\"nvidia.com/gpu\":\"$2\"},
		\"allocatable\":{\"nvidia.com/gpu\":\"$2\"}}}" application/merge-patch+json >/dev/null
}
node_gpus "$N5" 2
kc apply -f - >/dev/null <<<"$(pod_yaml dev-0 "0=$N5:3")" # (GPUs 0-2 of $N5 are held by late-0 and notready-0)
check_eventually "2-GPU node, device 3: FailedScheduling says so" 20 \
	pod_event_has dev-0 "FailedScheduling: node \"$N5\".* advertises 2 nvidia.com/gpu, so it has no device 3"
check "2-GPU node, device 3: not bound" test -z "$(pod_node dev-0)"
check "it counts as waiting, by its reason" \
	eval '[ "$(metric '"'"'gpu_scheduler_waiting_pods_by_reason{reason="NODE_DEVICES"}'"'"')" = 1 ]'
node_gpus "$N5" 4
check_eventually "the node advertises 4: bound at once" 5 pod_on dev-0 "$N5"

# --- repeats are aggregated: one pod waiting a while does not flood events -----------------------------
kc apply -f - >/dev/null <<<"$(pod_yaml flood-0 '0=gs-never-there:0')"
check_eventually "waiting pod has its event" 20 pod_event_has flood-0 FailedScheduling
for i in $(seq 1 5); do kc annotate pod flood-0 --overwrite "poke=$i" >/dev/null; sleep 0.3; done
n=$(kc get events --field-selector involvedObject.name=flood-0,reason=FailedScheduling -o name | grep -c .)
check "repeated FailedScheduling for the same reason is one event object (have $n)" test "$n" -le 1

# --- a restart while a pod waits: nothing is decided before both caches are listed ------------------
# The pod list often arrives before the node list; judged then, the pod's node would seem missing.
kc cordon node2 >/dev/null
kc apply -f - >/dev/null <<<"$(pod_yaml cordon-2 '2=node2:1')"
check_eventually "cordoned again: the pod waits" 20 pod_event_has cordon-2 'FailedScheduling: .*cordon'
daemon_stop TERM 15 && pass "SIGTERM: exit 0"
daemon_start --require-env=false || exit 1
check "restarted: ready" daemon_ready 30
check_eventually "restarted: the pod waits for its cordoned node" 10 \
	grep -q "pod $NS/cordon-2 waits: .*is cordoned" "$DAEMON_LOG"
check "restarted: its node was never reported missing" eval '! grep "cordon-2 waits: .*does not exist" "$DAEMON_LOG"'
kc uncordon node2 >/dev/null
check_eventually "uncordoned: bound by the restarted daemon" 5 pod_on cordon-2 node2

daemon_stop TERM 15 && pass "SIGTERM: exit 0 after the restart"
test_end
