#!/usr/bin/env bash
# Preemption against the real apiserver (issue 33; docs/sched.md, "Preemption"): the lab guide's
# scenario. A pod of another scheduler with PriorityClass low (100) holds a node's four GPUs through the
# device plugin; a mapped pod of high (100000) waits DEVICE_BUSY.
#
# First with --preemption=false: the daemon's /debug/pods and `gpu-scheduler explain` say that deleting
# that pod, and only it, would let it fit, and that this is only what it would do; a pod whose
# PriorityClass says preemptionPolicy Never never preempts; a pod of low has nothing of lower priority
# to take from. Then with preemption on (the default): the daemon puts DisruptionTarget on the victim,
# deletes it, nominates the pod (status.nominatedNodeName) and tells both by events; the victim,
# running and held by a finalizer, keeps terminating: a pod of middle priority for the same GPU finds
# it taken by the nomination and preempts nothing; a restart of the daemon between the nomination and
# the binding takes the nomination back and preempts no one again; once the victim is gone the pod is
# bound where its map says and the middle one keeps waiting (a higher priority is never a victim).
# Gangs: a running all-or-nothing gang is preempted whole (its member on another node too); a gathering
# one preempts on two nodes in one decision and is bound together; a gathering gang's reservation of
# lower priority is let go for a pod of higher priority, no pod deleted. PodDisruptionBudgets: a pod under
# a budget that allows no disruption is put back first, so the older pod outside it goes instead.
# The priorities and the policy come from the apiserver's Priority admission.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

N=gs-pre-$(printf '%04x' $RANDOM)
defer "node_delete $N"
node_make "$N" || { fail "node $N" "cannot create it"; test_end; }
priority_classes low=100 mid=1000 high=100000 never=100000:Never

daemon_start --require-env=false --preemption=false || exit 1
check "daemon ready (--preemption=false)" daemon_ready 30
cli() { "$GS_BUILD/gpu-scheduler" explain --kubeconfig "$KUBECONFIG" --require-env=false "$@"; }
debug() { curl -s --max-time 5 "$DAEMON_URL/debug/$1"; }

# The device plugin's pod: bound by nodeName, all four GPUs, priority 100; a finalizer keeps it while it
# terminates, as a kubelet would while its containers stop.
defer "kc patch pod low-0 --type=merge -p '{\"metadata\":{\"finalizers\":null}}' >/dev/null 2>&1"
check "low-0 (PriorityClass low) takes $N's four GPUs through the device plugin" eval 'kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: low-0, finalizers: [gpu-scheduler.test/hold]}
spec:
  nodeName: $N
  priorityClassName: $PC-low
  terminationGracePeriodSeconds: 30
  containers:
  - name: main
    image: busybox:stable
    resources: {limits: {nvidia.com/gpu: "4"}}
YAML'
check "the apiserver gave it priority 100" equals 100 kc get pod low-0 -o jsonpath='{.spec.priority}'
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
status() { # STATE_JSON: low-0's one container status (no kubelet runs here: we play it)
	kc patch pod low-0 --subresource=status --type=merge -p "{\"status\":{\"containerStatuses\":[{\"name\":\"main\",
		\"ready\":true,\"restartCount\":0,\"image\":\"busybox:stable\",\"imageID\":\"\",\"state\":$1}]}}" >/dev/null
}
check "low-0 reported running" status "{\"running\":{\"startedAt\":\"$now\"}}"

# mapped NAME CLASS ENTRY: a pod of ours with that PriorityClass.
mapped() { pod_yaml "$1" "$3" | sed "s/^spec:/spec:\n  priorityClassName: $PC-$2/" | kc apply -f - >/dev/null; }
mapped high-0 high "0=$N:1"
check_eventually "high-0 waits DEVICE_BUSY (its event)" 20 pod_event_has high-0 "FailedScheduling: $N has 4 GPUs"
check_eventually "/debug/pods: high-0 waits DEVICE_BUSY" 10 eval \
	'debug "pods/$NS/high-0" | jq -e ".reason == \"DEVICE_BUSY\"" >/dev/null'
dj=$(debug "pods/$NS/high-0")
check "/debug/pods: preempting low-0 alone would let it fit, on $N (preemption off: what it would do)" \
	equals "$N true $NS/low-0:100" jq -r '"\(.preemption.node) \(.preemption.off) \([.preemption.victims[] | "\(.pod):\(.priority)"] | join(","))"' <<<"$dj"
cj=$(cli -n "$NS" --preemption=false -o json high-0)
check "explain --preemption=false -o json (the command's own engine) says the same" \
	equals "$(jq -c .preemption <<<"$dj")" jq -c .preemption <<<"$cj"
check "explain (text) names it with its priority" eval \
	'cli -n "$NS" --preemption=false high-0 | grep -qx "  $NS/low-0 (priority 100)"'
check "nothing deleted, no one nominated" equals "0 " \
	eval 'echo "$(kc get pod low-0 -o jsonpath="{.metadata.deletionTimestamp}" | wc -c) $(kc get pod high-0 -o jsonpath="{.status.nominatedNodeName}")"'

mapped never-0 never "0=$N:2"
check_eventually "never-0 waits DEVICE_BUSY" 20 eval 'debug "pods/$NS/never-0" | jq -e ".reason == \"DEVICE_BUSY\"" >/dev/null'
check "never-0: its preemptionPolicy is Never (the daemon)" equals "its preemptionPolicy is Never" \
	eval 'debug "pods/$NS/never-0" | jq -r .preemption.none'
check "never-0: the same from the command" equals "its preemptionPolicy is Never" \
	eval 'cli -n "$NS" -o json never-0 | jq -r .preemption.none'

mapped peer-0 low "0=$N:3"
check_eventually "peer-0 (priority 100) waits DEVICE_BUSY" 20 eval \
	'debug "pods/$NS/peer-0" | jq -e ".reason == \"DEVICE_BUSY\"" >/dev/null'
check "peer-0: an equal priority is never a victim" equals "no pod of lower priority than 100 runs on node \"$N\"" \
	eval 'debug "pods/$NS/peer-0" | jq -r .preemption.none'

# ---- preemption on (the default) ---------------------------------------------------------------------
daemon_stop
daemon_start --require-env=false || exit 1
check "daemon ready (preemption on)" daemon_ready 30
cond() { kc get pod "$1" -o jsonpath='{range .status.conditions[?(@.type=="DisruptionTarget")]}{.status} {.reason} {.message}{end}' 2>/dev/null; }
check_eventually "low-0: DisruptionTarget True, PreemptionByScheduler, in kube-scheduler's words" 20 equals \
	"True PreemptionByScheduler $SCHEDULER_NAME: preempting to accommodate a higher priority pod" cond low-0
check_eventually "low-0 deleted (its finalizer keeps it while it terminates)" 10 \
	eval '[ -n "$(kc get pod low-0 -o jsonpath="{.metadata.deletionTimestamp}")" ]'
check "with its own grace period (30 s)" equals 30 kc get pod low-0 -o jsonpath='{.metadata.deletionGracePeriodSeconds}'
check_eventually "high-0 nominated: status.nominatedNodeName $N" 10 equals "$N" \
	kc get pod high-0 -o jsonpath='{.status.nominatedNodeName}'
HUID=$(kc get pod high-0 -o jsonpath='{.metadata.uid}')
LUID=$(kc get pod low-0 -o jsonpath='{.metadata.uid}')
check_eventually "low-0's event: Preempted by high-0, by uid and name, on $N" 10 pod_event_has low-0 \
	"^Preempted: Preempted by pod $HUID \\($NS/high-0\\) on node $N$"
check_eventually "high-0's event: Preempting low-0, its uid and priority" 10 pod_event_has high-0 \
	"^Preempting: Preempting 1 pod of lower priority on node $N: $NS/low-0 \\(uid $LUID, priority 100\\)$"
check "high-0 not bound while low-0 runs" test -z "$(pod_node high-0)"
check "never-0 preempts no one (policy Never), nor peer-0 (nothing of lower priority)" eval \
	'! pod_events never-0 | grep -q Preempting && ! pod_events peer-0 | grep -q Preempting'
check "metrics: one preemption, one victim, one pod nominated" equals "1 1 1" \
	eval 'echo $(metric "gpu_scheduler_preemption_attempts_total{result=\"preempted\"}") $(metric gpu_scheduler_preemption_victims_total) $(metric gpu_scheduler_nominated_pods)'
dj=$(debug "pods/$NS/high-0")
check "/debug/pods: high-0 nominated to $N, waiting for low-0 to stop before it preempts again" equals \
	"$N it is nominated to node \"$N\" and 1 pod of lower priority there is still terminating: it waits for it to stop before it preempts again" \
	jq -r '"\(.preemption.nominated) \(.preemption.none)"' <<<"$dj"
check "explain (its engine reads status.nominatedNodeName) says the same" \
	equals "$(jq -c .preemption <<<"$dj")" eval 'cli -n "$NS" -o json high-0 | jq -c .preemption'

# A pod of middle priority for the same GPU: the nomination holds it, low-0 is chosen already.
mapped mid-0 mid "0=$N:1"
check_eventually "mid-0 (priority 1000) waits DEVICE_BUSY" 20 eval \
	'debug "pods/$NS/mid-0" | jq -e ".reason == \"DEVICE_BUSY\"" >/dev/null'
check "mid-0 preempts nothing: low-0 is terminating already" equals \
	"no pod of lower priority than 1000 runs on node \"$N\" (1 being deleted already: it counts until it stops)" \
	eval 'debug "pods/$NS/mid-0" | jq -r .preemption.none'
check "low-0 was preempted once (one event)" equals 1 eval 'pod_events low-0 | grep -c "^Preempted:"'

# A restart between the nomination and the binding: the new daemon takes the nomination back from
# status.nominatedNodeName and preempts no one again.
daemon_stop
daemon_start --require-env=false || exit 1
check "daemon ready again" daemon_ready 30
check_eventually "the new daemon: high-0 nominated to $N again" 10 equals "$N" \
	eval 'debug "pods/$NS/high-0" | jq -r .preemption.nominated'
sleep 2
check "it preempted nothing: no attempt, still one Preempted event on low-0" equals "0 1" \
	eval 'echo $(metric "gpu_scheduler_preemption_attempts_total{result=\"preempted\"}") $(pod_events low-0 | grep -c "^Preempted:")'

# The victim's containers stop (it no longer counts, as the kubelet judges it): high-0 is bound where
# its map says. Then it goes, its finalizer removed, as the kubelet would delete it.
check "low-0's containers stopped" status "{\"terminated\":{\"exitCode\":0,\"startedAt\":\"$now\",\"finishedAt\":\"$now\"}}"
check_eventually "high-0 bound to $N, GPU 1" 20 equals "$N:1" pod_assigned high-0
kc patch pod low-0 --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
kc delete pod low-0 --grace-period=0 --force >/dev/null 2>&1
check_eventually "low-0 gone" 20 eval '! kc get pod low-0 >/dev/null 2>&1'
check_eventually "never-0 and peer-0 bound to $N too (GPUs 2 and 3)" 20 equals "$N:2 $N:3" \
	eval 'echo $(pod_assigned never-0) $(pod_assigned peer-0)'
check "mid-0 still waits (GPU 1 is high-0's), and never preempts a pod of higher priority" eval \
	'[ -z "$(pod_node mid-0)" ] && [ -z "$(cond high-0)" ] && ! pod_events mid-0 | grep -q Preempting'
check "mid-0: even with peer-0 (priority 100) gone, GPU 1 is high-0's (never a victim of it)" equals \
	"even with the 1 pod of lower priority on node \"$N\" gone: $N GPU 1 is held by $NS/high-0, a pod of another owner" \
	eval 'debug "pods/$NS/mid-0" | jq -r .preemption.none'
check "no pod nominated any more" equals 0 metric gpu_scheduler_nominated_pods

# ---- a running all-or-nothing gang goes whole ---------------------------------------------------------
# ring (low, all or nothing): ring-0 on $N's free GPU 0, ring-1 on $N-b's GPU 0. crit-0 (high) mapped to
# $N-b's GPU 0 preempts ring-1, and with it ring-0 on the other node: one rank alone runs nothing.
defer "node_delete $N-b"
node_make "$N-b" || fail "node $N-b" "cannot create it"
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS='gpu-scheduler.io/placement: all-or-nothing' \
	statefulset_yaml ring 2 "0=$N:0" "1=$N-b:0" | sed "s/^    spec:$/    spec:\n      priorityClassName: $PC-low/")"
check_eventually "the gang ring bound: ring-0 on $N, ring-1 on $N-b" 30 equals "$N:0 $N-b:0" \
	eval 'echo $(pod_assigned ring-0) $(pod_assigned ring-1)'
R0=$(kc get pod ring-0 -o jsonpath='{.metadata.uid}')
mapped crit-0 high "0=$N-b:0"
check_eventually "crit-0 preempts the whole gang: Preempting names ring-1 and ring-0" 20 pod_event_has crit-0 \
	"^Preempting: Preempting 2 pods of lower priority on node $N-b: $NS/ring-1 .*, $NS/ring-0 "
check_eventually "ring-0, on the other node, was told too" 10 pod_event_has ring-0 "^Preempted: Preempted by pod .* \\($NS/crit-0\\) on node $N-b$"
check_eventually "ring-0 deleted (its StatefulSet makes a new one)" 20 eval \
	'[ "$(kc get pod ring-0 -o jsonpath="{.metadata.uid}" 2>/dev/null)" != "$R0" ]'
check_eventually "crit-0 bound to $N-b, GPU 0" 20 equals "$N-b:0" pod_assigned crit-0

# ---- a gathering all-or-nothing gang preempts for all its members at once ------------------------------
# hold-c and hold-d (priority 0) take the four GPUs of $N-c and $N-d through the device plugin; the gang pair
# (high) maps one member to each: both are preempted in one decision and the gang is bound together.
for x in c d; do
	defer "node_delete $N-$x"
	node_make "$N-$x" || fail "node $N-$x" "cannot create it"
	plugin_pod "$N-$x" hold-$x 4
done
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS='gpu-scheduler.io/placement: all-or-nothing' \
	statefulset_yaml pair 2 "0=$N-c:0" "1=$N-d:0" | sed "s/^    spec:$/    spec:\n      priorityClassName: $PC-high/")"
check_eventually "pair-0 preempts hold-c" 30 pod_event_has pair-0 \
	"^Preempting: Preempting 1 pod of lower priority on node $N-c: $NS/hold-c "
check_eventually "pair-1 preempts hold-d, in the same decision" 10 pod_event_has pair-1 \
	"^Preempting: Preempting 1 pod of lower priority on node $N-d: $NS/hold-d "
check_eventually "the gang pair bound together: pair-0 on $N-c, pair-1 on $N-d" 30 equals "$N-c:0 $N-d:0" \
	eval 'echo $(pod_assigned pair-0) $(pod_assigned pair-1)'
check_eventually "GangScheduled on the StatefulSet" 10 eval \
	'kc get events --field-selector involvedObject.kind=StatefulSet,involvedObject.name=pair -o jsonpath="{.items[*].reason}" | grep -qw GangScheduled'

# ---- a gathering gang's reservation never blocks a pod of higher priority (issue 36) -------------------
# The gang held (low) gathers: held-0 reserves $N-e's GPU 0, held-1's node does not exist. urge-0 (high)
# for that GPU takes the reservation: no pod is deleted, urge-0 is bound, held-0 waits again.
defer "node_delete $N-e"
node_make "$N-e" || fail "node $N-e" "cannot create it"
kc apply -f - >/dev/null <<<"$(TEMPLATE_ANNOTATIONS='gpu-scheduler.io/placement: all-or-nothing' \
	statefulset_yaml held 2 "0=$N-e:0" "1=$N-none:0" | sed "s/^    spec:$/    spec:\n      priorityClassName: $PC-low/")"
check_eventually "held-0 reserves $N-e (GANG)" 30 eval 'debug "pods/$NS/held-0" | jq -e ".reason == \"GANG\"" >/dev/null'
H0=$(kc get pod held-0 -o jsonpath='{.metadata.uid}')
check "urge-0 (high) mapped 0=$N-e:0" mapped urge-0 high "0=$N-e:0"
check_eventually "urge-0 bound to $N-e, GPU 0" 20 equals "$N-e:0" pod_assigned urge-0
check "held-0 was not deleted, nor told it was preempted" eval \
	'[ "$(kc get pod held-0 -o jsonpath="{.metadata.uid}")" = "$H0" ] && ! pod_events held-0 | grep -q "^Preempted:"'
check_eventually "held-0 waits again (DEVICE_BUSY: GPU 0 is urge-0's)" 20 eval \
	'debug "pods/$NS/held-0" | jq -e ".reason == \"DEVICE_BUSY\"" >/dev/null'

# ---- PodDisruptionBudgets order the victims --------------------------------------------------------------
# batch-0 (older) and web-0 (younger), both low, take two of $N-f's GPUs each through the device plugin.
# Without a budget the younger would go; the budget web (minAvailable 1; web-0 is not Ready: no
# disruption allowed, as the disruption controller computes it) puts web-0 back first, so vip-0 (high,
# GPUs 0,1) preempts batch-0, and its events name no budget.
defer "node_delete $N-f"
node_make "$N-f" || fail "node $N-f" "cannot create it"
plugin_pod() { # NAME LABEL: bound to $N-f by nodeName, two GPUs through the device plugin, class low
	kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app: $2}}
spec:
  nodeName: $N-f
  priorityClassName: $PC-low
  containers:
  - name: main
    image: busybox:stable
    resources: {limits: {nvidia.com/gpu: "2"}}
YAML
}
check "batch-0 takes two of $N-f's GPUs" plugin_pod batch-0 batch
sleep 1.2 # creation times a second apart: web-0 is the younger
check "web-0 takes the other two" plugin_pod web-0 web
check "PodDisruptionBudget web (minAvailable 1, app=web)" eval 'kc apply -f - >/dev/null <<YAML
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
YAML'
check_eventually "the daemon holds it (gpu_scheduler_cache_objects)" 20 eval \
	'[ "$(metric "gpu_scheduler_cache_objects{kind=\"poddisruptionbudget\"}")" -ge 1 ]'
check "vip-0 (high) mapped 0=$N-f:0,1" mapped vip-0 high "0=$N-f:0,1"
check_eventually "batch-0 is preempted (DisruptionTarget, deleted)" 30 eval \
	'[ -n "$(kc get pod batch-0 -o jsonpath="{.metadata.deletionTimestamp}" 2>/dev/null)" ] || ! kc get pod batch-0 >/dev/null 2>&1'
check "web-0, younger but under the budget, is not" eval \
	'[ -z "$(kc get pod web-0 -o jsonpath="{.metadata.deletionTimestamp}")" ] && ! pod_events web-0 | grep -q "^Preempted:"'
check "vip-0's Preempting event names batch-0 and no budget" eval \
	'pod_events vip-0 | grep "^Preempting:" | grep "batch-0" | grep -vq "PodDisruptionBudget"'
check "no victim violated a budget (metric)" equals 0 metric gpu_scheduler_preemption_pdb_violations_total
test_end
