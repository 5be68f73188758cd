#!/usr/bin/env bash
# Parity with the kubelet and kube-scheduler, and claims the ledger does not believe, against the real
# apiserver (docs/sched.md, "Kubernetes versions"; golden 23-parity has the engine's side):
#   - a StatefulSet deleted with --cascade=orphan and applied again: the recreated pod shares its GPU
#     with the adopted sibling (the ledger follows the owner), where it used to wait for it forever;
#   - a deleted pod held by a finalizer keeps its GPU while a container runs and frees it the moment
#     none does (the kubelet's filterOutTerminatedPods);
#   - a cordoned node takes a pod tolerating node.kubernetes.io/unschedulable:NoSchedule, not others;
#   - a NotReady node without the not-ready taint makes pods wait NODE_NOT_READY; with it, the taint
#     and the pod's tolerations decide;
#   - --ignored-resource-groups: a pod asking for an extended resource no node advertises waits, one
#     of an ignored group is bound;
#   - who may map which node: the webhook refuses a pod whose entry names a node whose
#     gpu-scheduler.io/allowed-namespaces does not list its namespace; a pod created before the policy
#     changed waits with NODE_POLICY and is bound when the administrator lists its namespace;
#   - GPUs the device plugin gave to a pod of another scheduler, with no node agent to name them, are
#     counted against the node's GPUs: a mapped pod that would need one more waits until they are free;
#   - the node agent's data (its annotation, written here by hand): a device the plugin gave to a pod
#     bound to the node makes the mapped pod wait naming that pod, until it ends; a name that is no pod
#     there blocks nothing; a device given by a map and by the plugin raises DeviceConflict events on both
#     pods and gpu_scheduler_device_conflicts_total; the agent's error line falls back to counting; a
#     GPU index table that moves without a reboot is not believed (the pod mapped to the plugin's GPU
#     still waits), the same table after a new boot ID is (issue 36);
#   - trusted claims: a pod created with gpu-scheduler.io/assigned is refused by the webhook; a
#     squatter in a namespace the webhook does not see, bound by spec.nodeName with a claim on every GPU,
#     blocks nothing, and the claim is counted as ignored.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

N=gs-par-$(printf '%04x' $RANDOM)
for n in "$N-a" "$N-b" "$N-c" "$N-d" "$N-e"; do
	defer "node_delete $n"
	node_make "$n" || { fail "node $n" "cannot create it"; test_end; }
done
ATK=$NS-atk
defer "NS= kc delete namespace $ATK --wait=false >/dev/null 2>&1"
NS='' kc create namespace "$ATK" >/dev/null

webhook_daemon "$(test_workdir)" --ignored-resource-groups=ignored.example.com || exit 1
check "daemon ready" daemon_ready 30

# waits POD REASON REGEX: its FailedScheduling event says so and it is not bound.
waits() {
	check_eventually "$2: $1 has its FailedScheduling event" 20 pod_event_has "$1" "FailedScheduling: $3"
	check "$2: $1 not bound" test -z "$(pod_node "$1")"
}

# --- the ledger follows the owner: orphan, re-apply ----------------------------------------------------
kc apply -f - >/dev/null <<<"$(statefulset_yaml orph 2 "0=$N-a:0" "1=$N-a:0")"
check_eventually "orph-0 and orph-1 bound, sharing GPU 0 of $N-a" 30 \
	eval '[ "$(pod_node orph-0)" = "'"$N-a"'" ] && [ "$(pod_node orph-1)" = "'"$N-a"'" ]'
kc delete statefulset orph --cascade=orphan >/dev/null
check_eventually "orph-0 orphaned (no ownerReference)" 30 \
	eval '[ -z "$(kc get pod orph-0 -o jsonpath="{.metadata.ownerReferences}")" ]'
kc delete pod orph-1 --grace-period=0 --force --wait=false >/dev/null 2>&1
check_eventually "orph-1 gone" 20 eval '! kc get pod orph-1 >/dev/null 2>&1'
kc apply -f - >/dev/null <<<"$(statefulset_yaml orph 2 "0=$N-a:0" "1=$N-a:0")"
check_eventually "orph-0 adopted by the new StatefulSet" 30 \
	eval '[ "$(kc get pod orph-0 -o jsonpath="{.metadata.ownerReferences[0].uid}")" = "$(kc get statefulset orph -o jsonpath="{.metadata.uid}")" ]'
check_eventually "the recreated orph-1 is bound beside its adopted sibling" 20 pod_on orph-1 "$N-a"
check "no DEVICE_BUSY for orph-1" eval '! pod_events orph-1 | grep -q "is held by $NS/orph-0"'

# --- GPUs the device plugin gave out, counted though unnamed (GPU 0 of $N-a is orph's) ------------------
plugin_pod "$N-a" infer 3
ours cnt-0 "0=$N-a:2" >/dev/null
waits cnt-0 DEVICE_BUSY "$N-a has 4 GPUs: the device plugin gave 3 to pods requesting GPUs \($NS/infer\) \(which ones is unknown: $N-a has no gpu-scheduler agent data, docs/agent.md\), maps hold 1, and this entry needs 1 more"
kc delete pod infer --grace-period=0 --force --wait=false >/dev/null 2>&1
check_eventually "cnt-0 bound once the device plugin's pod is gone" 10 pod_on cnt-0 "$N-a"

# --- the node agent's data names the holder (written here as `gpu-scheduler agent` writes it) ------------
# $N-a: GPU 0 is orph's (map), GPU 2 cnt-0's (map). The kubelet gave GPU 3 to infer-3 (no kubelet runs
# here: the annotation plays the agent).
agent_data() { # TEXT: the node's devices-in-use annotation, '|' for newlines, NOW for the time
	kc annotate node "$N-a" --overwrite "gpu-scheduler.io/devices-in-use=$(printf '%s' "$1" |
		sed "s/NOW/$(date -u +%Y-%m-%dT%H:%M:%SZ)/" | tr '|' '\n')" >/dev/null
}
defer "kc annotate node $N-a gpu-scheduler.io/devices-in-use- >/dev/null 2>&1"
TABLE="index 0=GPU-a0 1=GPU-a1 2=GPU-a2 3=GPU-a3"
plugin_pod "$N-a" infer-3 1
agent_data "v1 NOW|$TABLE|nvidia.com/gpu GPU-a3 $NS/infer-3"
ours ag-0 "0=$N-a:3" >/dev/null
waits ag-0 DEVICE_BUSY "$N-a GPU 3 \(GPU-a3\) is held by $NS/infer-3 through the device plugin"
check "explain names the plugin's holder and the agent's data" eval '"$GS_BUILD/gpu-scheduler" explain --kubeconfig "$KUBECONFIG" \
	--require-env=false -n "$NS" ag-0 | grep -q "3 (GPU-a3) held by $NS/infer-3 through the device plugin"'
check "/debug/pods/$NS/ag-0 names it too" eval 'daemon_http "/debug/pods/$NS/ag-0" | jq -e ".holders[] | select(.devicePluginId == \"GPU-a3\") | .pod == \"$NS/infer-3\"" >/dev/null'
kc delete pod infer-3 --grace-period=0 --force --wait=false >/dev/null 2>&1
check_eventually "ag-0 bound the moment the plugin's pod is gone (before the agent writes again)" 10 pod_on ag-0 "$N-a"
# A name that is no pod on the node blocks nothing.
agent_data "v1 NOW|$TABLE|nvidia.com/gpu GPU-a1 $NS/ghost"
ours ag-1 "1=$N-a:1" >/dev/null
check_eventually "ag-1 bound: the agent's holder $NS/ghost is no pod on $N-a" 20 pod_on ag-1 "$N-a"
# A conflict: the plugin gave GPU 2, cnt-0's by its map, to infer-2 (the node was not dedicated).
conflicts_before=$(metric gpu_scheduler_device_conflicts_total)
plugin_pod "$N-a" infer-2 1
agent_data "v1 NOW|$TABLE|nvidia.com/gpu GPU-a2 $NS/infer-2"
check_eventually "DeviceConflict event on the mapped pod" 20 pod_event_has cnt-0 \
	"DeviceConflict: $N-a GPU 2 \(GPU-a2\) is given by a gpu-scheduling-map to $NS/cnt-0 and by the device plugin to $NS/infer-2"
check_eventually "DeviceConflict event on the plugin's pod" 20 pod_event_has infer-2 "DeviceConflict: $N-a GPU 2"
check "gpu_scheduler_device_conflicts_total counts it" \
	eval '[ "$(metric gpu_scheduler_device_conflicts_total)" -gt "${conflicts_before%.*}" ]'
check "gpu_scheduler_agent_nodes counts $N-a fresh" eval '[ "$(metric '"'"'gpu_scheduler_agent_nodes{state="fresh"}'"'"')" -ge 1 ]'
kc delete pod infer-2 --grace-period=0 --force --wait=false >/dev/null 2>&1
# The agent cannot read the kubelet: counted by requests again, and the message says why (GPU 1 freed
# for ag-2: maps hold GPUs 0, 2 and 3, the plugin's infer-4 has 2 more).
kc delete pod ag-1 --grace-period=0 --force --wait=false >/dev/null 2>&1
check_eventually "ag-1 gone" 20 eval '! kc get pod ag-1 >/dev/null 2>&1'
agent_data "v1 NOW|error the kubelet's PodResources socket /var/lib/kubelet/pod-resources/kubelet.sock does not exist"
plugin_pod "$N-a" infer-4 2
ours ag-2 "2=$N-a:1" >/dev/null
waits ag-2 DEVICE_BUSY "$N-a has 4 GPUs: the device plugin gave 2 to pods requesting GPUs \($NS/infer-4\) \(which ones is unknown: the gpu-scheduler agent on $N-a reports: the kubelet's PodResources socket"
kc delete pod infer-4 --grace-period=0 --force --wait=false >/dev/null 2>&1

# --- a GPU index table that moves without a reboot is not believed (issue 36) ----------------------------
# A forged or confused table that swaps GPU 0 and 1 would give tb-0 (mapped to GPU 1) the plugin's
# GPU-t1. The table believed is the first seen on this boot; a new boot ID lets the new one in.
node_make "$N-t"
defer "node_delete $N-t"
boot() { api PATCH "/api/v1/nodes/$N-t/status" "{\"status\":{\"nodeInfo\":{\"bootID\":\"$1\"}}}" application/merge-patch+json >/dev/null; }
agent_t() { kc annotate node "$N-t" --overwrite "gpu-scheduler.io/devices-in-use=$(printf 'v1 %s\nindex %s\nnvidia.com/gpu GPU-t1 %s/tinfer' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" "$NS")" >/dev/null; }
check "$N-t boots (bootID boot-1)" boot boot-1
plugin_pod "$N-t" tinfer 1
agent_t "0=GPU-t0 1=GPU-t1 2=GPU-t2 3=GPU-t3"
ours tb-0 "0=$N-t:1" >/dev/null
waits tb-0 DEVICE_BUSY "$N-t GPU 1 \(GPU-t1\) is held by $NS/tinfer through the device plugin"
sleep 1 # a new time line: the annotation's text changes
agent_t "0=GPU-t1 1=GPU-t0 2=GPU-t2 3=GPU-t3"
check_eventually "the daemon flags the table that moved without a reboot" 10 \
	grep -q "node $N-t: the gpu-scheduler agent's GPU index table changed without a reboot" "$DAEMON_LOG"
sleep 2
check "tb-0 still waits: GPU 1 is still GPU-t1, the plugin's" eval '[ -z "$(pod_node tb-0)" ]'
check "/debug/pods/$NS/tb-0: GPU 1 is GPU-t1, held by $NS/tinfer" eval 'daemon_http "/debug/pods/$NS/tb-0" |
	jq -e ".holders[] | select(.devicePluginId == \"GPU-t1\") | .pod == \"$NS/tinfer\"" >/dev/null'
check "$N-t reboots (bootID boot-2)" boot boot-2
sleep 1
agent_t "0=GPU-t1 1=GPU-t0 2=GPU-t2 3=GPU-t3"
check_eventually "the table after the reboot is believed: GPU 1 is GPU-t0, free, and tb-0 bound" 20 pod_on tb-0 "$N-t"

# --- a deleted pod held by a finalizer -------------------------------------------------------------------
POD_FIN=$(pod_yaml fin-0 "0=$N-b:1" | sed 's/^metadata:$/metadata:\n  finalizers: [gpu-scheduler.test\/hold]/')
defer "kc patch pod fin-0 --type=merge -p '{\"metadata\":{\"finalizers\":null}}' >/dev/null 2>&1"
kc apply -f - >/dev/null <<<"$POD_FIN"
check_eventually "fin-0 bound" 20 pod_on fin-0 "$N-b"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
status() { # STATE_JSON: fin-0's one container status (no kubelet runs here: we play it)
	kc patch pod fin-0 --subresource=status --type=merge -p "{\"status\":{\"containerStatuses\":[{\"name\":\"main\",
		\"ready\":false,\"restartCount\":0,\"image\":\"busybox:stable\",\"imageID\":\"\",\"state\":$1}]}}" >/dev/null
}
check "fin-0 reported running" status "{\"running\":{\"startedAt\":\"$now\"}}"
kc delete pod fin-0 --wait=false >/dev/null
check_eventually "fin-0 deleting, kept by its finalizer" 10 \
	eval '[ -n "$(kc get pod fin-0 -o jsonpath="{.metadata.deletionTimestamp}")" ]'
ours fin-1 "1=$N-b:1" >/dev/null
waits fin-1 DEVICE_BUSY "$N-b GPU 1 is held by $NS/fin-0, a pod of another owner"
check "its containers stopped" status "{\"terminated\":{\"exitCode\":0,\"startedAt\":\"$now\",\"finishedAt\":\"$now\"}}"
check_eventually "fin-1 bound once no container of fin-0 runs (its object still there)" 10 pod_on fin-1 "$N-b"
check "fin-0 still exists" kc get pod fin-0

# --- cordon through a toleration --------------------------------------------------------------------------
kc cordon "$N-c" >/dev/null
ours cord-0 "0=$N-c:0" >/dev/null
waits cord-0 NODE_CORDONED "node \"$N-c\" named by $GS_ANNOTATION line 1 for index 0 is cordoned"
ours cord-1 "1=$N-c:1" '  tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}]' >/dev/null
check_eventually "cord-1, tolerating the cordon, bound to the cordoned node" 20 pod_on cord-1 "$N-c"

# --- NotReady: waits for Ready without the taint; with it, the taint decides ------------------------------
node_set_ready "$N-d" False
ours nr-0 "0=$N-d:0" >/dev/null
waits nr-0 NODE_NOT_READY "node \"$N-d\" named by $GS_ANNOTATION line 1 for index 0 is not Ready"
kc taint node "$N-d" node.kubernetes.io/not-ready:NoSchedule >/dev/null
waits nr-0 TAINT "node \"$N-d\" has the taint node.kubernetes.io/not-ready:NoSchedule that the pod does not tolerate"
ours nr-1 "1=$N-d:1" '  tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoSchedule}]' >/dev/null
check_eventually "nr-1, tolerating the not-ready taint, bound" 20 pod_on nr-1 "$N-d"

# --- extended resources no node advertises: wait, unless ignored ------------------------------------------
ours ext-0 "0=$N-c:2" '  tolerations: [{operator: Exists}]' '    resources: {limits: {example.com/fpga: "1"}}' >/dev/null
waits ext-0 INSUFFICIENT_RESOURCE "Insufficient example.com/fpga: requests 1, 0 free of 0 allocatable on node \"$N-c\""
ours ext-1 "1=$N-c:3" '  tolerations: [{operator: Exists}]' '    resources: {limits: {ignored.example.com/fpga: "1"}}' >/dev/null
check_eventually "ext-1, asking only for a resource of an ignored group, bound" 20 pod_on ext-1 "$N-c"

# --- who may map which node ---------------------------------------------------------------------------------
kc annotate node "$N-e" "gpu-scheduler.io/allowed-namespaces=team-x, team-y" >/dev/null
# (check keeps its own "out": a name of our own for what kubectl printed)
forbidden() { ours pol-0 "0=$N-e:0" 2>&1 | grep -q "$GS_ANNOTATION line 1 for index 0: node \"$N-e\" does not let namespace \"$NS\" map it"; }
check_eventually "the webhook refuses a pod mapping a node its namespace may not use" 10 forbidden
check "so pol-0 does not exist" eval '! kc get pod pol-0 >/dev/null 2>&1'
kc cordon "$N-e" >/dev/null
kc annotate node "$N-e" "gpu-scheduler.io/allowed-namespaces=$NS" --overwrite >/dev/null
sleep 1 # the daemon's node cache follows the watch
ours pol-1 "1=$N-e:1" >/dev/null
waits pol-1 NODE_CORDONED "node \"$N-e\" named by $GS_ANNOTATION line 1 for index 1 is cordoned"
kc annotate node "$N-e" "gpu-scheduler.io/allowed-namespaces=team-x" --overwrite >/dev/null
kc uncordon "$N-e" >/dev/null
waits pol-1 NODE_POLICY "node \"$N-e\" does not let namespace \"$NS\" map it \(its annotation gpu-scheduler.io/allowed-namespaces is \"team-x\"\)"
check "NODE_POLICY counted in gpu_scheduler_waiting_pods_by_reason" \
	eval '[ "$(metric '"'"'gpu_scheduler_waiting_pods_by_reason{reason="NODE_POLICY"}'"'"')" -ge 1 ]'
kc annotate node "$N-e" "gpu-scheduler.io/allowed-namespaces=team-x,$NS" --overwrite >/dev/null
check_eventually "pol-1 bound once its namespace is listed" 10 pod_on pol-1 "$N-e"

# --- trusted claims ---------------------------------------------------------------------------------------
squatter() { # NS: a default-scheduler pod bound by spec.nodeName claiming every GPU of $N-b
	kubectl --kubeconfig "$KUBECONFIG" -n "$1" apply -f - 2>&1 <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: squatter
  annotations: {gpu-scheduler.io/assigned: "$N-b:0,1,2,3,4,5,6,7"}
spec:
  nodeName: $N-b
  terminationGracePeriodSeconds: 0
  containers: [{name: main, image: busybox:stable}]
YAML
}
# (check keeps its own "out": a name of our own for what kubectl printed)
refused=$(squatter "$NS")
check "the webhook refuses a pod created with gpu-scheduler.io/assigned" \
	eval 'grep -q "gpu-scheduler.io/assigned is set only by gpu-scheduler.s binding" <<<"$refused"'
check "so it does not exist" eval '! kc get pod squatter >/dev/null 2>&1'
before=$(metric gpu_scheduler_ignored_claims_total)
squatter "$ATK" >/dev/null
check "in a namespace the webhook does not see, the squatter is created" \
	eval 'kubectl --kubeconfig "$KUBECONFIG" -n "$ATK" get pod squatter >/dev/null'
check_eventually "its claim is counted as ignored" 10 \
	eval '[ "$(metric gpu_scheduler_ignored_claims_total)" -gt "${before%.*}" ]'
check "the log says why" grep -q "pod $ATK/squatter: its gpu-scheduler.io/assigned annotation .* is ignored: the pod is not scheduled by us" "$DAEMON_LOG"
ours victim-0 "0=$N-b:0" >/dev/null
check_eventually "a mapped pod on a GPU the squatter claims is bound all the same" 20 pod_on victim-0 "$N-b"

test_end
