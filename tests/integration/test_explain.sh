#!/usr/bin/env bash
# "Why is my pod pending", asked two ways against the real apiserver: the daemon's /debug/pods/NS/NAME
# and /debug/pending on the health port, and `gpu-scheduler explain` (also as the kubectl plugin)
# without the daemon's help. Both must give the same verdict and the same outcome for every check:
# they run the same engine, one on its watch caches, the other on what it reads itself.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

N=gs-exp-$(printf '%04x' $RANDOM)
defer "node_delete $N"
node_make "$N" || { fail "node $N" "cannot create it"; test_end; }

daemon_start --require-env=false || exit 1
check "daemon ready" daemon_ready 30

cli() { "$GS_BUILD/gpu-scheduler" explain --kubeconfig "$KUBECONFIG" --require-env=false "$@"; }
debug() { curl -s --max-time 5 "$DAEMON_URL/debug/$1"; }
# checks JSON: "name=outcome" for every check, one line
checks_of() { jq -r '[.checks[] | "\(.name)=\(.outcome)"] | join(" ")'; }

# A holder of node GPU 0 (a bare pod of ours, bound), then a pod of another owner that wants GPU 0 and
# more cpu than the node has: DEVICE_BUSY is not the first failure, INSUFFICIENT_RESOURCE is.
pod_yaml holder-0 "0=$N:0" | kc apply -f - >/dev/null
check_eventually "holder-0 bound to $N" 20 pod_on holder-0 "$N"
{
	pod_yaml train-0 "0=$N:0,1"
	printf '    resources:\n      requests:\n        cpu: "64"\n'
} | kc apply -f - >/dev/null
check_eventually "train-0 waits (FailedScheduling event)" 20 pod_event_has train-0 "FailedScheduling: Insufficient cpu"

check_eventually "/debug/pods answers for train-0" 10 eval 'debug "pods/$NS/train-0" | jq -e ".state == \"WAITING\"" >/dev/null'
dj=$(debug "pods/$NS/train-0")
check "/debug/pods: reason INSUFFICIENT_RESOURCE, verdict the same" \
	equals "INSUFFICIENT_RESOURCE INSUFFICIENT_RESOURCE" jq -r '"\(.reason) \(.verdict)"' <<<"$dj"
check "/debug/pods: the map entry, its line and the index source" \
	equals "0=$N:0,1 1 name suffix -N" jq -r '"\(.entry) \(.mapLine) \(.indexSource)"' <<<"$dj"
check "/debug/pods: every check with its outcome (resources and devices fail)" \
	equals "pod=pass node-exists=pass node-ready=pass node-schedulable=pass node-policy=pass node-gpus=pass affinity=pass taints=pass host-ports=pass resources=fail devices=fail" \
	checks_of <<<"$dj"
check "/debug/pods: the devices check names the holder" \
	eval 'jq -r ".checks[] | select(.name==\"devices\") | .message" <<<"$dj" | grep -q "GPU 0 is held by $NS/holder-0"'
check "/debug/pods: the ledger's holder of GPU 0, another owner" \
	equals "0 $NS/holder-0 false" jq -r '.holders[] | "\(.device) \(.pod) \(.sameOwner)"' <<<"$dj"

pj=$(debug pending)
check "/debug/pending: INSUFFICIENT_RESOURCE counted" eval 'jq -e ".waitingByReason.INSUFFICIENT_RESOURCE >= 1" <<<"$pj" >/dev/null'
check "/debug/pending: train-0 among the oldest with its reason" \
	eval 'jq -e --arg ns "$NS" ".oldest[] | select(.namespace==\$ns and .name==\"train-0\" and .reason==\"INSUFFICIENT_RESOURCE\")" <<<"$pj" >/dev/null'
check "/debug/pods of an unknown pod: 404 with a message" \
	eval '[ "$(curl -s -o /dev/null -w %{http_code} "$DAEMON_URL/debug/pods/$NS/nope")" = 404 ]'

# The command, without the daemon's help, agrees check by check.
cj=$(cli -n "$NS" -o json train-0)
check "explain -o json: exit 0" test -n "$cj"
check "explain and /debug/pods agree on the verdict and every check" \
	equals "$(checks_of <<<"$dj") $(jq -r .verdict <<<"$dj")" eval 'echo "$(checks_of <<<"$cj") $(jq -r .verdict <<<"$cj")"'
txt=$(cli -n "$NS" train-0)
check "explain (text): the reason, the failing checks and what it waits for" eval '
	grep -q "reason:   INSUFFICIENT_RESOURCE: Insufficient cpu: requests 64" <<<"$txt" &&
	grep -q "FAIL  resources" <<<"$txt" && grep -q "FAIL  devices .*GPU 0 is held by $NS/holder-0" <<<"$txt" &&
	grep -q "0 held by $NS/holder-0" <<<"$txt" &&
	grep -q "Now: the pod waits (INSUFFICIENT_RESOURCE); it is placed again on pods on the node ending" <<<"$txt"'

# The holder ends and the cpu request is fixed: both say the pod is bound now.
kc delete pod holder-0 --wait=false >/dev/null
kc delete pod train-0 --wait=false >/dev/null
check_eventually "train-0 gone" 30 eval '! kc get pod train-0 >/dev/null 2>&1'
pod_yaml train-0 "0=$N:0,1" | kc apply -f - >/dev/null
check_eventually "train-0 (recreated, fits) bound to $N" 20 pod_on train-0 "$N"
check_eventually "/debug/pods: BOUND" 10 eval 'debug "pods/$NS/train-0" | jq -e ".state == \"BOUND\"" >/dev/null'
check "explain: bound, its own GPUs held by itself" eval '
	t=$(cli -n "$NS" train-0) && grep -q "state:    BOUND" <<<"$t" && grep -q "0 held by $NS/train-0 (owner .*), the same owner as this pod" <<<"$t"'

# A node that does not exist: the node checks are skipped, and both say what it waits for.
pod_yaml lost-0 "0=$N-missing:0" | kc apply -f - >/dev/null
check_eventually "lost-0 waits for its node" 20 pod_event_has lost-0 "FailedScheduling: node \"$N-missing\""
check "explain: NODE_MISSING, waits for the node joining" eval '
	t=$(cli -n "$NS" lost-0) && grep -q "FAIL  node-exists .*does not exist" <<<"$t" &&
	grep -q "it is placed again on the node joining the cluster" <<<"$t"'
check "explain and /debug/pods agree for lost-0" \
	equals "$(debug "pods/$NS/lost-0" | checks_of)" eval 'cli -n "$NS" -o json lost-0 | checks_of'

# A map naming a node through its alias label: the command resolves it as the daemon does.
A=$N-alias
api PATCH "/api/v1/nodes/$N" "{\"metadata\":{\"labels\":{\"gpu-scheduler.io/node\":\"$A\"}}}" application/merge-patch+json >/dev/null
{
	pod_yaml alias-0 "0=$A:3"
	printf '    resources:\n      requests:\n        cpu: "64"\n'
} | kc apply -f - >/dev/null
check_eventually "alias-0 waits on $A (node $N)" 20 pod_event_has alias-0 "FailedScheduling: $A [(]node $N[)]: Insufficient cpu"
check "explain: the alias resolved, and the same checks as the daemon" eval '
	t=$(cli -n "$NS" alias-0) && grep -q "node:     $A (node $N), devices 3" <<<"$t" &&
	[ "$(cli -n "$NS" -o json alias-0 | checks_of)" = "$(debug "pods/$NS/alias-0" | checks_of)" ] &&
	[ "$(debug "pods/$NS/alias-0" | jq -r .resolvedNode)" = "$N" ]'

# The kubectl plugin: a kubectl-gpu_scheduler on PATH makes `kubectl gpu-scheduler explain` work.
plug=$(mktemp -d)
defer "rm -rf $plug"
ln -s "$PWD/deploy/kubectl-gpu_scheduler" "$plug/kubectl-gpu_scheduler"
check "kubectl gpu-scheduler explain (plugin) prints the explanation" eval '
	PATH="$plug:$PATH" GPU_SCHEDULER="$PWD/$GS_BUILD/gpu-scheduler" KUBECONFIG="$KUBECONFIG" "$GS_KUBECTL" \
		gpu-scheduler explain -n "$NS" lost-0 | grep -q "Pod $NS/lost-0"'

# Errors: clear, non-zero, nothing printed on stdout.
check "explain of a missing pod: exit 1, the apiserver's message" eval '
	e=$(cli -n "$NS" nope 2>&1 >/dev/null); rc=$?; [ $rc -eq 1 ] && grep -q "pods \"nope\" not found" <<<"$e"'
kc run other-sched --image=busybox:stable --restart=Never --command -- sleep 3600 >/dev/null 2>&1
check "explain of another scheduler's pod: exit 1, says whose it is" eval '
	e=$(cli -n "$NS" other-sched 2>&1 >/dev/null); [ $? -eq 1 ] && grep -q "default-scheduler" <<<"$e"'
check "explain with a bad name: exit 2" eval 'cli -n "$NS" "Bad_Name" >/dev/null 2>&1; [ $? -eq 2 ]'

# --debug-endpoints=false turns the route off.
daemon_stop
daemon_start --require-env=false --debug-endpoints=false || exit 1
check "daemon ready (no debug endpoints)" daemon_ready 30
check "--debug-endpoints=false: /debug/pending is 404" \
	eval '[ "$(curl -s -o /dev/null -w %{http_code} "$DAEMON_URL/debug/pending")" = 404 ]'

test_end
