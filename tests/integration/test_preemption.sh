#!/usr/bin/env bash
# Preemption's first step against the real apiserver (issue 33; docs/sched.md, "Preemption"): the lab
# guide's scenario. A pod of another scheduler with PriorityClass gs-low (100) holds a node's four GPUs
# through the device plugin; a mapped pod of gs-high (100000) waits DEVICE_BUSY, and both the daemon's
# /debug/pods and `gpu-scheduler explain` say that deleting that pod, and only it, would let it fit. A pod
# whose PriorityClass says preemptionPolicy Never is told it never preempts; a pod of gs-low has nothing
# of lower priority to take from. The priorities and the policy come from the apiserver's Priority
# admission (spec.priority, spec.preemptionPolicy), read by the daemon's watch and by the command.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

N=gs-pre-$(printf '%04x' $RANDOM)
defer "node_delete $N"
node_make "$N" || { fail "node $N" "cannot create it"; test_end; }
PC=${NS#gs-}
defer "NS= kc delete priorityclass $PC-low $PC-high $PC-never --ignore-not-found --wait=false >/dev/null 2>&1"
check "PriorityClasses low (100), high (100000), never (100000, preemptionPolicy Never)" eval 'NS= kc apply -f - >/dev/null <<YAML
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: $PC-low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: $PC-high}
value: 100000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: $PC-never}
value: 100000
preemptionPolicy: Never
YAML'

daemon_start --require-env=false || exit 1
check "daemon ready" daemon_ready 30
cli() { "$GS_BUILD/gpu-scheduler" explain --kubeconfig "$KUBECONFIG" --require-env=false "$@"; }
debug() { curl -s --max-time 5 "$DAEMON_URL/debug/$1"; }

# The device plugin's pod: bound by nodeName, all four GPUs, priority 100.
check "low-0 (PriorityClass low) takes $N's four GPUs through the device plugin" eval 'kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: low-0}
spec:
  nodeName: $N
  priorityClassName: $PC-low
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: busybox:stable
    resources: {limits: {nvidia.com/gpu: "4"}}
YAML'
check "the apiserver gave it priority 100" equals 100 kc get pod low-0 -o jsonpath='{.spec.priority}'

# mapped NAME CLASS ENTRY: a pod of ours with that PriorityClass.
mapped() { pod_yaml "$1" "$3" | sed "s/^spec:/spec:\n  priorityClassName: $PC-$2/" | kc apply -f - >/dev/null; }
mapped high-0 high "0=$N:1"
check_eventually "high-0 waits DEVICE_BUSY (its event)" 20 pod_event_has high-0 "FailedScheduling: $N has 4 GPUs"
check_eventually "/debug/pods: high-0 waits DEVICE_BUSY" 10 eval \
	'debug "pods/$NS/high-0" | jq -e ".reason == \"DEVICE_BUSY\"" >/dev/null'
dj=$(debug "pods/$NS/high-0")
check "/debug/pods: preempting low-0 alone would let it fit, on $N" \
	equals "$N $NS/low-0:100" jq -r '"\(.preemption.node) \([.preemption.victims[] | "\(.pod):\(.priority)"] | join(","))"' <<<"$dj"
cj=$(cli -n "$NS" -o json high-0)
check "explain -o json (the command's own engine) says the same" \
	equals "$(jq -c .preemption <<<"$dj")" jq -c .preemption <<<"$cj"
check "explain (text) names it with its priority" eval \
	'cli -n "$NS" high-0 | grep -qx "  $NS/low-0 (priority 100)"'

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

# low-0 deleted (as preemption would): high-0 is bound where its map says.
check "low-0 deleted" eval 'kc delete pod low-0 --grace-period=0 --force >/dev/null 2>&1'
check_eventually "high-0 bound to $N" 20 pod_on high-0 "$N"
test_end
