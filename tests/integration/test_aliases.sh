#!/usr/bin/env bash
# Node aliases (--node-alias-label, default gpu-scheduler.io/node) against the real apiserver, on API
# nodes named as kind names its workers (CLUSTER-worker, CLUSTER-worker2, ...) and labelled with the
# names a map uses, as deploy/kind/kind-config.yaml labels them: a StatefulSet shaped like the check
# StatefulSet lands 0..4 where the labels say (not where the node names would); the binding, its
# gpu-scheduler.io/assigned annotation and the ledger use the real node name, the Scheduled event and
# the log show both names; a relabel moves only the pods not yet bound; two nodes with the same value
# make a pod wait with NODE_ALIAS_AMBIGUOUS naming both, and it binds once one label is removed; a
# label removed makes the name missing; a node that takes the name itself wins.
#
# Names: the default test cluster has real nodes node1..node4, and a node's own name wins over a
# label, so this test uses map names of its own ($P-node1..$P-node4, unique per run) on nodes of its
# own ($P-worker..$P-worker6). The literal node1..node4 labels on kind-named kubelets, with
# deploy/examples/gpu-scheduler-check.yaml itself, are the end-to-end suite's
# (GS_NODE_NAMES=gpu-worker,gpu-worker2,gpu-worker3,gpu-worker4, docs/cluster.md).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

P=gs-ali-$(printf '%04x' $RANDOM)
KEY=gpu-scheduler.io/node
W1=$P-worker W2=$P-worker2 W3=$P-worker3 W4=$P-worker4 W5=$P-worker5 W6=$P-worker6
for n in "$W1" "$W2" "$W3" "$W4" "$W5" "$W6" "$P-node5"; do defer "node_delete $n"; done
for n in "$W1" "$W2" "$W3" "$W4" "$W5" "$W6"; do
	node_make "$n" || { fail "node $n" "cannot create it"; test_end; }
done

# label NODE VALUE|-: sets or removes the alias label.
label() {
	if [ "$2" = - ]; then
		NS='' kc label node "$1" "$KEY-" >/dev/null
	else
		NS='' kc label node "$1" "$KEY=$2" --overwrite >/dev/null
	fi
}
# Out of order on purpose: the labels decide, not the names' digits.
label "$W1" "$P-node3"
label "$W2" "$P-node1"
label "$W3" "$P-node4"
label "$W4" "$P-node2"

daemon_start --require-env=false || exit 1
check "daemon ready" daemon_ready 30
check "the log names the alias label" grep -q "node alias label $KEY," "$DAEMON_LOG"

# ---- the check StatefulSet's map, over the labels -------------------------------------------------

WANT=("$W2" "$W4" "$W1" "$W3" "$W3")
DEVS=(0,1 2 0,1,2 3 3)
statefulset_yaml chk 5 "0=$P-node1:0,1" "1=$P-node2:2" "2=$P-node3:0,1,2" "3=$P-node4:3" "4=$P-node4:3" |
	kc apply -f - >/dev/null
for i in 0 1 2 3 4; do
	check_eventually "chk-$i bound to ${WANT[i]} (its map says $P-node$((i < 4 ? i + 1 : 4)))" 30 pod_on "chk-$i" "${WANT[i]}"
done
for i in 0 1 2 3 4; do
	check "chk-$i: gpu-scheduler.io/assigned is ${WANT[i]}:${DEVS[i]} (the real name)" \
		equals "${WANT[i]}:${DEVS[i]}" pod_assigned "chk-$i"
done
check_eventually "the Scheduled event shows both names" 10 pod_event_has chk-0 \
	"Scheduled: Successfully assigned $NS/chk-0 to $P-node1 \(node $W2\) with CUDA_VISIBLE_DEVICES=0,1"
check "the log shows both names" grep -q "bound pod $NS/chk-3 to $P-node4 (node $W3)" "$DAEMON_LOG"

# ---- the ledger and the checks work on the resolved node ------------------------------------------

# GPU 3 of $W3 is held by chk-3 and chk-4 (one owner); a bare pod wanting it through the alias waits.
kc apply -f - >/dev/null <<<"$(pod_yaml busy-0 "0=$P-node4:3")"
check_eventually "busy-0: DEVICE_BUSY on the resolved node, both names" 20 pod_event_has busy-0 \
	"FailedScheduling: $P-node4 \(node $W3\): $W3 GPU 3 is held by $NS/chk-[34], a pod of another owner"
kc delete pod busy-0 --grace-period=0 --force >/dev/null 2>&1

# ---- a relabel moves only the pods not yet bound --------------------------------------------------

check "$W3 cordoned" eval 'NS="" kc cordon "$W3" >/dev/null'
kc apply -f - >/dev/null <<<"$(pod_yaml rel-0 "0=$P-node4:1")"
check_eventually "rel-0 waits: its node, through the label, is cordoned" 20 pod_event_has rel-0 \
	"FailedScheduling: $P-node4 \(node $W3\) named by $GS_ANNOTATION line 1 for index 0 is cordoned"
check "rel-0 not bound" test -z "$(pod_node rel-0)"
check "$P-node4 moved from $W3 to $W5" eval 'label "$W3" - && label "$W5" "$P-node4"'
check_eventually "rel-0 bound to $W5, where $P-node4 is now" 20 pod_on rel-0 "$W5"
check "rel-0: assigned $W5:1" equals "$W5:1" pod_assigned rel-0
check "$W3 uncordoned" eval 'NS="" kc uncordon "$W3" >/dev/null'
sleep 1
for i in 3 4; do
	check "chk-$i, bound before the relabel, is still on $W3" pod_on "chk-$i" "$W3"
done

# ---- ambiguity ----------------------------------------------------------------------------------

check "$W3 and $W6 both labelled $P-node5" eval 'label "$W3" "$P-node5" && label "$W6" "$P-node5"'
kc apply -f - >/dev/null <<<"$(pod_yaml amb-0 "0=$P-node5:2")"
check_eventually "amb-0 waits with NODE_ALIAS_AMBIGUOUS naming both nodes" 20 pod_event_has amb-0 \
	"FailedScheduling: node \"$P-node5\" named by $GS_ANNOTATION line 1 for index 0 is ambiguous: no node has that name and nodes ($W3 and $W6|$W6 and $W3) carry the label $KEY=$P-node5"
check_eventually "amb-0: PodScheduled=False Unschedulable" 10 eval '[ "$(pod_condition amb-0)" = "False Unschedulable" ]'
check "amb-0: counted in gpu_scheduler_waiting_pods_by_reason{reason=\"NODE_ALIAS_AMBIGUOUS\"}" \
	equals 1 metric 'gpu_scheduler_waiting_pods_by_reason{reason="NODE_ALIAS_AMBIGUOUS"}'
check "amb-0 not bound" test -z "$(pod_node amb-0)"
check "the label removed from $W6" label "$W6" -
check_eventually "amb-0 bound to $W3, the one node left with $P-node5" 20 pod_on amb-0 "$W3"
check_eventually "NODE_ALIAS_AMBIGUOUS: no pod waits for it any more" 10 \
	equals 0 metric 'gpu_scheduler_waiting_pods_by_reason{reason="NODE_ALIAS_AMBIGUOUS"}'

# ---- the label removed; then a node named like the map's name -----------------------------------

check "the label removed from $W3 as well" label "$W3" -
kc apply -f - >/dev/null <<<"$(pod_yaml gone-1 "1=$P-node5:3")"
check_eventually "gone-1 waits: no node has the name or the label" 20 pod_event_has gone-1 \
	"FailedScheduling: node \"$P-node5\" named by $GS_ANNOTATION line 1 for index 1 does not exist \(and no node carries the label $KEY=$P-node5\)"
check "$W6 labelled $P-node5 again, then a node named $P-node5 made in the same breath" eval \
	'label "$W6" "$P-node5" && node_make "$P-node5"'
# Whichever the scheduler saw first, the name wins once both exist; the pod may only be on one of the two.
check_eventually "gone-1 bound to $P-node5 or $W6" 20 eval '[ "$(pod_node gone-1)" = "$P-node5" ] || [ "$(pod_node gone-1)" = "$W6" ]'
kc apply -f - >/dev/null <<<"$(pod_yaml name-2 "2=$P-node5:3")"
check_eventually "name-2, created with both present, is bound to the node named $P-node5 (the name wins)" 20 \
	pod_on name-2 "$P-node5"
check "amb-0, bound before, is still on $W3" pod_on amb-0 "$W3"
check "rel-0, bound before, is still on $W5" pod_on rel-0 "$W5"

test_end
