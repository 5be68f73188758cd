#!/usr/bin/env bash
# End to end on real kubelets: pods the node would refuse are never bound there. Each case of issue 11
# (a pod asking for more cpu than node1 has free, a nodeSelector node3 fails, a GPU another workload
# holds, a pod that also asks the device plugin for GPUs) waits with its reason instead of ending
# Failed at the kubelet, and runs where its map says once the cause is fixed; a StatefulSet whose pods
# do not fit is not deleted and recreated in a loop (its pod UIDs are counted over 30 s).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

check "gpu-scheduler deployed ($DEPLOYED_FROM, self-signed certificate)" deploy_scheduler

# The maps say node1..node4; R[i] is the node that means, W[i] how messages introduce a check there.
node_names
echo "  node1..node4 are ${R[*]}"

# pod_manifest NAME SCHEDULER ENTRY EXTRA_SPEC CONTAINER_EXTRA: a check pod (it logs its node and
# devices); SCHEDULER "default" makes a pod of another scheduler bound by nodeName (ENTRY = node).
pod_manifest() {
	local name=$1 sched=$2 entry=$3 spec=$4 ctr=$5
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n' "$name"
	if [ "$sched" = ours ]; then
		printf '  annotations:\n    gpu-scheduling-map: "%s"\nspec:\n  schedulerName: %s\n' "$entry" "$SCHEDULER_NAME"
	else
		printf 'spec:\n  nodeName: %s\n' "$entry"
	fi
	cat <<YAML
  terminationGracePeriodSeconds: 1
  automountServiceAccountToken: false
  enableServiceLinks: false
  securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532}
$spec
  containers:
  - name: check
    image: gpu-scheduler-check:latest
    imagePullPolicy: IfNotPresent
    env:
    - {name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: CHECK_INTERVAL, value: "5"}
$ctr
YAML
}

pending_unbound() { [ "$(phase_node "$1")" = "Pending " ] || { echo "$1: $(phase_node "$1")"; return 1; }; }

# waits POD REGEX: the FailedScheduling event says why; 5 s later the pod is still Pending, unbound
# (the kubelet never saw it, so it cannot have failed it).
waits() {
	check_eventually "$1 waits: $2" 60 event_has "$1" "FailedScheduling: $2"
	sleep 5
	check "$1 is still Pending and unbound (not Failed at a kubelet)" pending_unbound "$1"
}

# --- more cpu than node1 has free: a pod of another scheduler takes 1.5 cpu of node1's 2 -----------
check "a pod of another scheduler takes 1.5 cpu on node1" eval \
	'pod_manifest hog default "${R[1]}" "" "    resources: {requests: {cpu: 1500m}}" | kc apply -f - >/dev/null'
check_eventually "it runs on node1" 90 running_on hog "${R[1]}"
pod_manifest big-0 ours "0=node1:2" "" "    resources: {requests: {cpu: \"64\"}}" | kc apply -f - >/dev/null
pod_manifest cpu-0 ours "0=node1:1" "" "    resources: {requests: {cpu: \"1\"}}" | kc apply -f - >/dev/null
waits big-0 "${W[1]}"'Insufficient cpu: requests 64, [0-9.]+ free of 2 allocatable on node "'"${R[1]}"'"'
waits cpu-0 "${W[1]}"'Insufficient cpu: requests 1, 0.[0-9]+ free of 2 allocatable on node "'"${R[1]}"'"'
check "the pod of another scheduler deleted" kc delete pod hog --wait=false
check_eventually "cpu-0 runs on node1 once the cpu is free" 90 running_on cpu-0 "${R[1]}"
check "big-0 (64 cpu) still waits" pending_unbound big-0

# --- a nodeSelector node3 fails: the label added ---------------------------------------------------
defer 'NS="" kc label node "${R[3]}" disktype- >/dev/null 2>&1'
pod_manifest sel-0 ours "0=node3:2" "  nodeSelector: {disktype: ssd}" "" | kc apply -f - >/dev/null
waits sel-0 "${W[3]}"'node "'"${R[3]}"'" does not match the pod.s nodeSelector: it has no label disktype=ssd'
check "node3 labelled disktype=ssd" eval 'NS="" kc label node "${R[3]}" disktype=ssd >/dev/null'
check_eventually "sel-0 runs on node3" 90 running_on sel-0 "${R[3]}"

# --- a GPU another workload holds: the holder deleted ------------------------------------------------
pod_manifest holder-0 ours "0=node2:0" "" "" | kc apply -f - >/dev/null
check_eventually "holder-0 runs on node2 with GPU 0" 90 running_on holder-0 "${R[2]}"
pod_manifest bare-0 ours "0=node2:0" "" "" | kc apply -f - >/dev/null
waits bare-0 "${W[2]}${R[2]} GPU 0 is held by $NS/holder-0, a pod of another owner"
check "the holder deleted" kc delete pod holder-0 --wait=false
check_eventually "bare-0 runs on node2" 90 running_on bare-0 "${R[2]}"
check_eventually "bare-0 logs CUDA_VISIBLE_DEVICES=0" 30 eval \
	'kc logs bare-0 | grep -q "node=${R[2]} CUDA_VISIBLE_DEVICES=0 pod=bare-0"'

# --- a taint node4 carries: removed -------------------------------------------------------------------
defer 'NS="" kc taint node "${R[4]}" gpu- >/dev/null 2>&1 || true' # for a run that stops before "the taint removed"
check "node4 tainted gpu=busy:NoSchedule" eval 'NS="" kc taint node "${R[4]}" gpu=busy:NoSchedule >/dev/null'
pod_manifest taint-0 ours "0=node4:2" "" "" | kc apply -f - >/dev/null
waits taint-0 "${W[4]}"'node "'"${R[4]}"'" has the taint gpu=busy:NoSchedule that the pod does not tolerate'
check "the taint removed" eval 'NS="" kc taint node "${R[4]}" gpu- >/dev/null'
check_eventually "taint-0 runs on node4" 90 running_on taint-0 "${R[4]}"

# --- a mapped pod that also asks the device plugin for a GPU --------------------------------------------
created=$(pod_manifest dp-0 ours "0=node2:2,3" "" "    resources: {limits: {nvidia.com/gpu: \"1\"}}" | kc apply -f - 2>&1)
check "the webhook warned at creation" eval \
	'printf "%s" "$created" | grep -q "Warning: containers request 1 nvidia.com/gpu: the device plugin"'
check_eventually "a DevicePluginRequest event says the entry names 2 devices for a request of 1" 60 event_has dp-0 \
	'DevicePluginRequest: .*the entry names 2 devices but the containers request 1'
check_eventually "dp-0 runs on node2 as its map says" 90 running_on dp-0 "${R[2]}"

# --- a StatefulSet that does not fit: no delete/recreate loop ----------------------------------------
kc apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: nofit
spec:
  replicas: 2
  podManagementPolicy: Parallel
  serviceName: nofit
  selector: {matchLabels: {app: nofit}}
  template:
    metadata:
      labels: {app: nofit}
      annotations:
        gpu-scheduling-map: |
          0=node3:3
          1=node4:3
    spec:
      schedulerName: $SCHEDULER_NAME
      terminationGracePeriodSeconds: 1
      automountServiceAccountToken: false
      containers:
      - name: check
        image: gpu-scheduler-check:latest
        imagePullPolicy: IfNotPresent
        resources: {requests: {cpu: "64"}}
YAML
check_eventually "both StatefulSet pods exist" 60 eval '[ "$(kc get pods -l app=nofit -o name | wc -l)" = 2 ]'
seen=$(mktemp)
for _ in $(seq 1 30); do
	kc get pods -l app=nofit -o jsonpath='{range .items[*]}{.metadata.uid} {.status.phase}{"\n"}{end}' >>"$seen"
	sleep 1
done
n_uids=$(awk '{ print $1 }' "$seen" | sort -u | grep -c .)
check "30 s later: still the same 2 pod UIDs, never recreated (saw $n_uids)" test "$n_uids" = 2
check "none of them ever Failed" eval '! grep -q Failed "$seen"'
rm -f "$seen"
check "nofit-0 says why it waits" event_has nofit-0 "FailedScheduling: ${W[3]}Insufficient cpu: requests 64"

test_end
