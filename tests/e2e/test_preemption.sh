#!/usr/bin/env bash
# End to end: the lab guide's preemption scenario on real kubelets with the device plugin (issue 33;
# docs/sched.md, "Preemption"). PriorityClasses low (1000) and high (100000); a pod of low bound to node2
# takes its four GPUs through the device plugin; a mapped pod of high, `0=node2:1`, preempts it: the
# victim gets the DisruptionTarget condition and is deleted (its kubelet stops it within its grace
# period), the mapped pod is nominated to node2 and then runs there with CUDA_VISIBLE_DEVICES=1; both
# are told by events. A mapped pod of low for another GPU of node2 preempts nothing (nothing of lower
# priority runs there) and runs once the GPUs are free.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin
needs_device_plugin

check "gpu-scheduler deployed ($DEPLOYED_FROM)" deploy_scheduler
node_names
N=${R[2]}
priority_classes low=1000 high=100000

check "low-0 (low) bound to $N, asking the device plugin for four GPUs" eval 'kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: low-0}
spec:
  nodeName: $N
  priorityClassName: $PC-low
  terminationGracePeriodSeconds: 5
  automountServiceAccountToken: false
  containers:
  - name: main
    image: localhost/gs-pause:3.2
    imagePullPolicy: Never
    resources:
      limits: {nvidia.com/gpu: "4", cpu: 50m, memory: 16Mi}
YAML'
check_eventually "low-0 runs on $N with the node's four GPUs" 90 running_on low-0 "$N"

check "high-0 (high) mapped 0=node2:1" eval \
	'check_pod high-0 "0=node2:1" "  priorityClassName: $PC-high" | kc apply -f - >/dev/null'
cond() { kc get pod low-0 -o jsonpath='{range .status.conditions[?(@.type=="DisruptionTarget")]}{.status} {.reason}{end}' 2>/dev/null; }
check_eventually "low-0: DisruptionTarget True, PreemptionByScheduler" 60 equals "True PreemptionByScheduler" cond
check_eventually "high-0 nominated to $N (status.nominatedNodeName), or bound there already" 20 eval \
	'[ "$(kc get pod high-0 -o jsonpath="{.status.nominatedNodeName}")" = "$N" ] || [ "$(kc get pod high-0 -o jsonpath="{.spec.nodeName}")" = "$N" ]'
check_eventually "low-0 stopped by its kubelet and gone" 60 eval '! kc get pod low-0 >/dev/null 2>&1'
check_eventually "high-0 runs on $N" 90 running_on high-0 "$N"
check_eventually "high-0 sees CUDA_VISIBLE_DEVICES=1" 30 eval \
	'kc logs high-0 | grep -q "node=$N CUDA_VISIBLE_DEVICES=1 pod=high-0"'
check "low-0's event: Preempted by high-0 on $N" event_has low-0 "^Preempted: Preempted by pod .* \\($NS/high-0\\) on node $N$"
check "high-0's event: Preempting low-0" event_has high-0 "^Preempting: Preempting 1 pod of lower priority on node $N: $NS/low-0 "
check "no DeviceConflict: a nomination runs nothing (the agent named low-0's GPUs meanwhile)" eval \
	'! events_of high-0 | grep -q "^DeviceConflict:" && ! events_of low-0 | grep -q "^DeviceConflict:"'

check "peer-0 (low) mapped 0=node2:3" eval \
	'check_pod peer-0 "0=node2:3" "  priorityClassName: $PC-low" | kc apply -f - >/dev/null'
check_eventually "peer-0 runs on $N (GPU 3 free: nothing to preempt)" 90 running_on peer-0 "$N"
check "peer-0 preempted nothing" eval '! events_of peer-0 | grep -q "^Preempting:"'
check "high-0 was never a victim" eval '[ -z "$(kc get pod high-0 -o jsonpath="{.status.conditions[?(@.type==\"DisruptionTarget\")].status}")" ]'
check "high-0 and peer-0 deleted" kc delete pod high-0 peer-0 --wait=true --timeout=60s
test_end
