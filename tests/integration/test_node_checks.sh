#!/usr/bin/env bash
# The node admission checks and the device ledger against the real apiserver: a pod the node would
# refuse (not enough cpu, a nodeSelector it fails, a taint it does not tolerate, a host port in use) or
# whose GPU another workload holds waits with its reason, its FailedScheduling event, the
# PodScheduled=False condition and its metric, and is bound to the node its map names within a second
# of the event that clears the cause. Plus: pods of one StatefulSet share the GPU their map gives them
# both; the ledger survives a restart; a mapped pod that asks the device plugin for GPUs is warned by
# the webhook and by an event.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

N=gs-chk-$(printf '%04x' $RANDOM)
N2=$N-b
defer "node_delete $N"
defer "node_delete $N2"
node_make "$N" || { fail "node $N" "cannot create it"; test_end; }
node_make "$N2" || { fail "node $N2" "cannot create it"; test_end; }

work=$(test_workdir)
webhook_daemon "$work" || exit 1
check "daemon ready" daemon_ready 30

# A pod of another scheduler, bound at creation (no kubelet runs there: it stays Pending and counts,
# like a running pod): NAME, extra container YAML (resources, ports), node (default $N).
foreign_pod() {
	local name=$1 extra=$2 node=${3:-$N}
	kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $name
spec:
  nodeName: $node
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: busybox:stable
$extra
YAML
}

# waits POD REASON REGEX: the event, the condition and the metric say so, and the pod is not bound.
waits() {
	local pod=$1 reason=$2 re=$3
	check_eventually "$reason: $pod has its FailedScheduling event" 20 pod_event_has "$pod" "FailedScheduling: $re"
	check_eventually "$reason: $pod PodScheduled=False Unschedulable" 10 \
		eval '[ "$(pod_condition '"$pod"')" = "False Unschedulable" ]'
	check "$reason: counted in gpu_scheduler_waiting_pods_by_reason" \
		eval '[ "$(metric '"'"'gpu_scheduler_waiting_pods_by_reason{reason="'"$reason"'"}'"'"')" -ge 1 ]'
	check "$reason: $pod not bound" test -z "$(pod_node "$pod")"
}

# fixed POD WHAT CMD...: runs the fix and checks POD is bound to $NODE (default $N) within a second of
# it (its spec.nodeName watched and stamped as it changes).
fixed() {
	local pod=$1 what=$2 stamps t0 t1 lat pg node=${NODE:-$N}
	shift 2
	stamps=$work/$pod.stamps
	setsid bash -c 'kubectl --kubeconfig "$1" -n "$2" get pod "$3" -w -o jsonpath="{.spec.nodeName}{\"\n\"}" 2>/dev/null |
		while IFS= read -r l; do printf "%s %s\n" "$(date +%s.%N)" "$l"; done' _ "$KUBECONFIG" "$NS" "$pod" >"$stamps" &
	pg=$!
	sleep 1
	t0=$(date +%s.%N)
	"$@" >/dev/null
	check_eventually "$what: $pod bound to $node" 10 pod_on "$pod" "$node"
	sleep 0.3
	kill -- -"$pg" 2>/dev/null
	t1=$(awk -v n="$node" '$2 == n { print $1; exit }' "$stamps")
	if [ -n "$t1" ]; then
		lat=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		check "$what: bound ${lat}s after it (<= 1 s)" awk -v l="$lat" 'BEGIN { exit !(l <= 1.0) }'
	else
		fail "$what: bind latency" "no watch line with $node in $stamps"
	fi
}

# --- resources: a foreign pod takes the cpu; deleting it frees the cpu ---------------------------------
foreign_pod hog-0 '    resources: {requests: {cpu: "31500m", memory: 1Gi}}'
ours cpu-0 "0=$N:0" '' '    resources: {requests: {cpu: "1"}}' >/dev/null
waits cpu-0 INSUFFICIENT_RESOURCE "Insufficient cpu: requests 1, 0.5 free of 32 allocatable on node \"$N\""
fixed cpu-0 "the foreign pod deleted" kc delete pod hog-0 --grace-period=0 --force --wait=false

# --- nodeSelector: the label added to the node -------------------------------------------------------
ours sel-0 "0=$N:1" '  nodeSelector: {disktype: ssd}' >/dev/null
waits sel-0 NODE_AFFINITY "node \"$N\" does not match the pod's nodeSelector: it has no label disktype=ssd"
fixed sel-0 "label disktype=ssd added" kc label node "$N" disktype=ssd

# --- required node affinity, Gt on a label -----------------------------------------------------------
ours aff-0 "0=$N:2" '  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: gpu-gen, operator: Gt, values: ["2"]}]' >/dev/null
waits aff-0 NODE_AFFINITY "node \"$N\" does not match the pod.s required node affinity: gpu-gen Gt .2.: no such label"
fixed aff-0 "label gpu-gen=3 added" kc label node "$N" gpu-gen=3

# --- an affinity value labels.NewRequirement refuses (issue 20) ------------------------------------------
# NotIn on a label the node lacks would hold; but "a/b" is not a label value, so kube-scheduler and the
# kubelet skip the term, and so do we: the pod waits, saying why. Up to 1.2x the apiserver accepted such
# a pod; a current one refuses it at creation, and only pods stored before an upgrade still carry one
# (the engine's rule stays, tests/golden/sched/10-affinity.txt).
affbad=$(ours affbad-0 "0=$N:3" '  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: zone, operator: NotIn, values: ["a/b"]}]' 2>&1)
if [ "$(server_minor)" -le 20 ]; then
	check "the apiserver (1.$(server_minor)) accepts a NotIn value that is not a label value" kc get pod affbad-0
	waits affbad-0 NODE_AFFINITY "node \"$N\" does not match the pod.s required node affinity: zone NotIn .a/b. is not a valid selector: .a/b. is not a valid label value, so the term matches no node"
	kc delete pod affbad-0 --grace-period=0 --force --wait=false >/dev/null 2>&1
	check_eventually "affbad-0 gone" 20 eval '! kc get pod affbad-0 >/dev/null 2>&1'
else
	check "the apiserver (1.$(server_minor)) refuses a NotIn value that is not a label value" eval \
		'grep -q "values\[0\]: Invalid value: \"a/b\"" <<<"$affbad" && ! kc get pod affbad-0 >/dev/null 2>&1'
fi

# --- a taint the pod does not tolerate ------------------------------------------------------------------
kc taint node "$N" gpu=busy:NoSchedule >/dev/null
defer "kc taint node $N gpu- >/dev/null 2>&1"
ours taint-0 "0=$N:3" >/dev/null
waits taint-0 TAINT "node \"$N\" has the taint gpu=busy:NoSchedule that the pod does not tolerate"
ours tol-0 "0=$N:3" '  tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]' >/dev/null
check_eventually "a pod tolerating it is bound" 10 pod_on tol-0 "$N"
kc delete pod tol-0 --grace-period=0 --force --wait=false >/dev/null 2>&1
check_eventually "tol-0 gone" 20 eval '! kc get pod tol-0 >/dev/null 2>&1'
fixed taint-0 "the taint removed" kc taint node "$N" gpu-

# --- a host port in use (on $N2, whose GPUs are all free) -----------------------------------------------
foreign_pod proxy-0 '    ports: [{containerPort: 8080, hostPort: 8080}]' "$N2"
ours port-0 "0=$N2:0" '' '    ports: [{containerPort: 8080, hostPort: 8080}]' >/dev/null
waits port-0 HOST_PORT "host port TCP 8080 is already in use on node \"$N2\""
NODE=$N2 fixed port-0 "the pod holding the port deleted" kc delete pod proxy-0 --grace-period=0 --force --wait=false

# --- the ledger: GPU 1 of $N is held by sel-0; a bare pod wanting it waits, named -------------------
ours busy-0 "0=$N:1" >/dev/null
waits busy-0 DEVICE_BUSY "$N GPU 1 is held by $NS/sel-0, a pod of another owner"
check "the ledger counts the device" eval '[ "$(metric '"'"'gpu_scheduler_ledger_devices{state="held"}'"'"')" -ge 4 ]'

# A restart rebuilds the ledger from gpu-scheduler.io/assigned before deciding anything.
daemon_stop TERM 10 >/dev/null
DAEMON_WEBHOOK=1 daemon_start "${WEBHOOK_DAEMON[@]}" || exit 1
check "restarted daemon ready" daemon_ready 30
ours busy-1 "1=$N:2" >/dev/null
check_eventually "after a restart: GPU 2 is still held by aff-0" 20 \
	pod_event_has busy-1 "FailedScheduling: $N GPU 2 is held by $NS/aff-0"
check "after a restart: busy-0 still waits" test -z "$(pod_node busy-0)"
fixed busy-0 "the holder deleted" kc delete pod sel-0 --grace-period=0 --force --wait=false

# --- pods of one StatefulSet share the GPU their map gives them both ----------------------------------
kc apply -f - >/dev/null <<<"$(statefulset_yaml share 2 "0=$N2:3" "1=$N2:3")"
check_eventually "StatefulSet pods 0 and 1 both bound to GPU 3 of $N2" 30 \
	eval '[ "$(pod_node share-0)" = "'"$N2"'" ] && [ "$(pod_node share-1)" = "'"$N2"'" ]'
ours other-0 "0=$N2:3" >/dev/null
check_eventually "a bare pod wanting that GPU waits, naming a holder" 20 \
	pod_event_has other-0 "FailedScheduling: $N2 GPU 3 is held by $NS/share-[01], a pod of another owner"

# --- the device plugin: a mapped pod that also requests nvidia.com/gpu --------------------------------
# (check and wait_for keep their own "out": a name of our own for what kubectl printed)
created=$(ours dp-0 "0=$N2:1,2" '' '    resources: {limits: {nvidia.com/gpu: "1"}}')
check "the webhook warns at creation (kubectl prints it)" \
	eval 'printf "%s" "$created" | grep -q "Warning: containers request 1 nvidia.com/gpu"'
check_eventually "dp-0 is bound as its map says all the same" 10 pod_on dp-0 "$N2"
check_eventually "DevicePluginRequest event" 20 pod_event_has dp-0 \
	"DevicePluginRequest: containers request 1 nvidia.com/gpu: .*the entry names 2 devices but the containers request 1"

test_end
