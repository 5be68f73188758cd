#!/usr/bin/env bash
# End to end on real kubelets: the parity cases of docs/sched.md that a kubelet shows best.
#   - a StatefulSet deleted with --cascade=orphan and applied again (the documented way to change
#     volumeClaimTemplates): its recreated pod runs beside the adopted sibling that shares its GPU,
#     where it used to wait with DEVICE_BUSY held by its own sibling;
#   - a deleted pod held by a finalizer: once its container stopped (the kubelet killed it), the GPU
#     is free for the next pod although the object is still there;
#   - a cordoned node runs a pod that tolerates node.kubernetes.io/unschedulable:NoSchedule; one that
#     does not waits with NODE_CORDONED.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

check "gpu-scheduler deployed (deploy/, self-signed certificate)" \
	env GS_OVERLAY_DIR="$GS_CLUSTER_DIR/overlay" "$GS_ROOT/tests/cluster/deploy.sh" scheduler

node_names

# --- orphan and re-apply --------------------------------------------------------------------------------
sts() {
	cat <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: orph
spec:
  replicas: 2
  podManagementPolicy: Parallel
  serviceName: orph
  selector: {matchLabels: {app: orph}}
  template:
    metadata:
      labels: {app: orph}
      annotations:
        gpu-scheduling-map: |
          0=node3:3
          1=node3:3
    spec:
      schedulerName: $SCHEDULER_NAME
      terminationGracePeriodSeconds: 1
      automountServiceAccountToken: false
      securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532}
      containers:
      - name: check
        image: gpu-scheduler-check:latest
        imagePullPolicy: IfNotPresent
YAML
}
check "StatefulSet orph applied (both pods map GPU 3 of node3)" eval 'sts | kc apply -f - >/dev/null'
check_eventually "orph-0 and orph-1 run on node3" 90 eval 'running_on orph-0 "${R[3]}" && running_on orph-1 "${R[3]}"'
check "deleted with --cascade=orphan" kc delete statefulset orph --cascade=orphan
check_eventually "orph-0 orphaned, still running" 60 \
	eval '[ -z "$(kc get pod orph-0 -o jsonpath="{.metadata.ownerReferences}")" ] && running_on orph-0 "${R[3]}"'
check "orph-1 deleted" kc delete pod orph-1 --wait=true --timeout=60s
check "applied again" eval 'sts | kc apply -f - >/dev/null'
check_eventually "orph-0 adopted by the new StatefulSet" 60 \
	eval '[ "$(kc get pod orph-0 -o jsonpath="{.metadata.ownerReferences[0].uid}")" = "$(kc get statefulset orph -o jsonpath="{.metadata.uid}")" ]'
check_eventually "the recreated orph-1 runs beside its adopted sibling" 90 running_on orph-1 "${R[3]}"
check "orph-1 never waited for its sibling" eval '! events_of orph-1 | grep -q "is held by $NS/orph-0"'

# --- a deleted pod held by a finalizer ------------------------------------------------------------------
defer "kc patch pod fin-0 --type=merge -p '{\"metadata\":{\"finalizers\":null}}' >/dev/null 2>&1"
check "fin-0 created with a finalizer" eval \
	'check_pod fin-0 "0=node2:1" "" "  finalizers: [gpu-scheduler.test/hold]" | kc apply -f - >/dev/null'
check_eventually "fin-0 runs on node2" 90 running_on fin-0 "${R[2]}"
check_pod fin-1 "1=node2:1" | kc apply -f - >/dev/null
check_eventually "fin-1 waits for GPU 1, held by fin-0" 60 event_has fin-1 \
	"FailedScheduling: ${W[2]}${R[2]} GPU 1 is held by $NS/fin-0, a pod of another owner"
check "fin-0 deleted (its finalizer keeps the object)" kc delete pod fin-0 --wait=false
check_eventually "fin-1 runs on node2 once fin-0's container stopped" 90 running_on fin-1 "${R[2]}"
check "fin-0 still exists, deleting" eval '[ -n "$(kc get pod fin-0 -o jsonpath="{.metadata.deletionTimestamp}")" ]'
check_eventually "fin-1 logs CUDA_VISIBLE_DEVICES=1" 30 eval \
	'kc logs fin-1 | grep -q "node=${R[2]} CUDA_VISIBLE_DEVICES=1 pod=fin-1"'

# --- a cordoned node and a pod that tolerates it --------------------------------------------------------
defer 'NS="" kc uncordon "${R[4]}" >/dev/null 2>&1'
check "node4 cordoned" eval 'NS="" kc cordon "${R[4]}" >/dev/null'
check_pod cord-0 "0=node4:0" | kc apply -f - >/dev/null
check_pod cord-1 "1=node4:1" \
	"  tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}]" | kc apply -f - >/dev/null
check_eventually "cord-1, tolerating the cordon, runs on node4" 90 running_on cord-1 "${R[4]}"
check_eventually "cord-0 waits: node4 is cordoned" 60 event_has cord-0 "FailedScheduling: .*is cordoned"
check "cord-0 unbound" eval '[ "$(phase_node cord-0)" = "Pending " ]'

test_end
