#!/usr/bin/env bash
# End to end on real kubelets: the parity cases of docs/sched.md that a kubelet shows best.
#   - a StatefulSet deleted with --cascade=orphan and applied again (the documented way to change
#     volumeClaimTemplates): its recreated pod runs beside the adopted sibling that shares its GPU,
#     where it used to wait with DEVICE_BUSY held by its own sibling;
#   - a deleted pod held by a finalizer: once its container stopped (the kubelet killed it), the GPU
#     is free for the next pod although the object is still there;
#   - a cordoned node runs a pod that tolerates node.kubernetes.io/unschedulable:NoSchedule; one that
#     does not waits with NODE_CORDONED;
#   - a placeholder (--gang-placeholders, on in deploy/) holds a waiting gang member's CPU on node1:
#     kube-scheduler cannot place a pod there that needs it, and does once the gang is gone.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

check "gpu-scheduler deployed ($DEPLOYED_FROM, self-signed certificate)" deploy_scheduler

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

# --- a placeholder holds a gang member's CPU against kube-scheduler --------------------------------------
# millicores of a quantity ("2", "1500m", "0.5")
milli() { awk -v q="$1" 'BEGIN { if (q ~ /m$/) { sub(/m$/, "", q); print int(q) } else print int(q * 1000) }'; }
# CPU free on a node: allocatable minus the requests of its pods that have not ended
free_cpu() {
	local alloc used=0 q
	alloc=$(milli "$(NS="" kc get node "$1" -o jsonpath='{.status.allocatable.cpu}')")
	for q in $(NS="" kc get pods -A --field-selector "spec.nodeName=$1,status.phase!=Succeeded,status.phase!=Failed" \
		-o jsonpath='{range .items[*]}{range .spec.containers[*]}{.resources.requests.cpu}{" "}{end}{end}'); do
		used=$((used + $(milli "$q")))
	done
	echo $((alloc - used))
}
free1=$(free_cpu "${R[1]}")
want=$((free1 * 6 / 10))
check "node1 has CPU to share ($free1 m free; each side asks $want m)" eval '[ "$want" -ge 100 ]'
gang_sts() {
	cat <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: hold
spec:
  replicas: 2
  podManagementPolicy: Parallel
  serviceName: hold
  selector: {matchLabels: {app: hold}}
  template:
    metadata:
      labels: {app: hold}
      annotations:
        gpu-scheduler.io/placement: all-or-nothing
        gpu-scheduling-map: |
          0=node1:2
          1=gs-nowhere:0
    spec:
      schedulerName: $SCHEDULER_NAME
      terminationGracePeriodSeconds: 1
      automountServiceAccountToken: false
      securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532}
      containers:
      - name: check
        image: gpu-scheduler-check:latest
        imagePullPolicy: IfNotPresent
        resources: {requests: {cpu: ${want}m}}
YAML
}
ks_pod() {
	cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: ks-0
spec:
  terminationGracePeriodSeconds: 1
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532}
  tolerations: [{operator: Exists}]
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: ["${R[1]}"]}]}]
  containers:
  - name: check
    image: gpu-scheduler-check:latest
    imagePullPolicy: IfNotPresent
    resources: {requests: {cpu: ${want}m}}
YAML
}
ph_on() {
	kc get pods -l gpu-scheduler.io/placeholder=true \
		-o jsonpath='{range .items[*]}{.status.phase} {.spec.nodeName} {.spec.containers[0].resources.requests.cpu}{"\n"}{end}'
}
check "StatefulSet hold applied (all or nothing; index 1's node does not exist)" eval 'gang_sts | kc apply -f - >/dev/null'
check_eventually "hold-0 waits for its gang, reserved on node1" 60 event_has hold-0 'FailedScheduling: fits node .* \(reserved\)'
check_eventually "its placeholder runs on node1 with the member's ${want}m" 90 eval '[ "$(ph_on)" = "Running ${R[1]} ${want}m" ]'
check "kube-scheduler's pod ks-0 created (node1 only, ${want}m)" eval 'ks_pod | kc apply -f - >/dev/null'
check_eventually "ks-0 cannot have the reserved CPU: FailedScheduling Insufficient cpu" 60 event_has ks-0 'FailedScheduling: .*Insufficient cpu'
check "ks-0 unbound, hold-0 unbound" eval '[ "$(phase_node ks-0)" = "Pending " ] && [ "$(phase_node hold-0)" = "Pending " ]'
check "the gang deleted" kc delete statefulset hold --wait=false
check_eventually "its placeholder is gone" 60 eval '[ -z "$(ph_on)" ]'
check_eventually "ks-0 runs on node1 now" 120 running_on ks-0 "${R[1]}"

test_end
