#!/usr/bin/env bash
# The node agent's least privilege (issue 36, item 5) against the real apiserver: deploy/agent's RBAC
# grants `patch` on every Node, and deploy/agent/policy.yaml, a ValidatingAdmissionPolicy, narrows it to
# the annotation gpu-scheduler.io/devices-in-use of the agent's own Node, the node its pod-bound token
# names (authentication.kubernetes.io/node-name, set by the apiserver for a token bound to a pod on a
# node). Here the policy and the ClusterRole apply under test names to a ServiceAccount of $NS, with a
# token bound to a pod on node A: it writes A's annotation, and nothing else (another node, a label,
# another annotation, taints, unschedulable, the status, a delete); a token of the same account bound to
# no pod writes nothing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

work=$(test_workdir)
sfx=$(printf '%04x' $RANDOM)
A=gs-pol-a-$sfx
B=gs-pol-b-$sfx
ANN=gpu-scheduler.io/devices-in-use
for n in "$A" "$B"; do
	node_make "$n" || { fail "node $n" "cannot create it"; exit 1; }
	defer "node_delete $n"
done

sa_role_kubeconfig "$GS_ROOT/deploy/agent/rbac.yaml" gpu-scheduler-agent agent "$work/sa.kubeconfig"
UNBOUND=$SA_TOKEN

# The policy under a test name, for this ServiceAccount.
python3 - "$GS_ROOT/deploy/agent/policy.yaml" "gs-test-agent-$NS" "system:serviceaccount:$NS:agent" \
	>"$work/policy.yaml" <<'EOF'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
for d in docs:
    d["metadata"]["name"] = sys.argv[2]
    if d["kind"] == "ValidatingAdmissionPolicyBinding":
        d["spec"]["policyName"] = sys.argv[2]
    else:
        for c in d["spec"]["matchConditions"]:
            c["expression"] = c["expression"].replace(
                "system:serviceaccount:kube-system:gpu-scheduler-agent", sys.argv[3])
print(yaml.safe_dump_all(docs))
EOF
check "deploy/agent/policy.yaml applies (ValidatingAdmissionPolicy and its binding)" eval \
	'NS= kc apply -f "$work/policy.yaml" >/dev/null'
defer "NS= kc delete validatingadmissionpolicybinding gs-test-agent-$NS >/dev/null 2>&1"
defer "NS= kc delete validatingadmissionpolicy gs-test-agent-$NS >/dev/null 2>&1"
check_eventually "the policy's expressions type-check (no status.typeChecking warnings)" 30 eval \
	'NS= kc get validatingadmissionpolicy gs-test-agent-$NS -o json | jq -e ".status.observedGeneration == .metadata.generation and ((.status.typeChecking.expressionWarnings // []) | length) == 0" >/dev/null'

# A pod on node A (no kubelet runs it) and a token bound to it, as the kubelet projects the agent's.
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: agent-a}
spec:
  serviceAccountName: agent
  nodeName: $A
  containers: [{name: c, image: busybox}]
EOF
uid=$(kc get pod agent-a -o jsonpath='{.metadata.uid}')
BOUND=$(api POST "/api/v1/namespaces/$NS/serviceaccounts/agent/token" \
	"{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenRequest\",\"spec\":{\"expirationSeconds\":3600,
	\"boundObjectRef\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"name\":\"agent-a\",\"uid\":\"$uid\"}}}" | jq -r .status.token)
check "a token bound to pod agent-a" test -n "$BOUND" -a "$BOUND" != null
who() { API_TOKEN=$1 api POST /apis/authentication.k8s.io/v1/selfsubjectreviews '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}'; }
check "the apiserver says it names node $A" eval \
	'who "$BOUND" | jq -e --arg n "$A" ".status.userInfo.extra[\"authentication.kubernetes.io/node-name\"] == [\$n]" >/dev/null'

merge() { jq -cn --arg k "$1" --arg v "$2" '{metadata: {annotations: {($k): $v}}}'; }
# as TOKEN METHOD PATH BODY [TYPE]: the status code of the request made with TOKEN.
as() { local t=$1; shift; API_TOKEN=$t api_code "$@"; }
M=application/merge-patch+json
line=$'v1 2026-11-29T00:00:00Z\nindex 0=GPU-aaaaaaaa'

# The policy takes a moment to be in force: until another node's annotation is refused.
check_eventually "the policy is in force: the bound token may not write node $B's annotation" 30 equals 403 \
	as "$BOUND" PATCH "/api/v1/nodes/$B" "$(merge "$ANN" "$line")" $M
# What the agent does: its own node's annotation.
check "the bound token patches $ANN on its own node $A: 200" equals 200 \
	as "$BOUND" PATCH "/api/v1/nodes/$A" "$(merge "$ANN" "$line")" $M
check "the annotation is there" eval \
	'[ "$(NS= kc get node "$A" -o jsonpath="{.metadata.annotations.gpu-scheduler\.io/devices-in-use}")" = "$line" ]'
check "removing it is allowed too: 200" equals 200 \
	as "$BOUND" PATCH "/api/v1/nodes/$A" "{\"metadata\":{\"annotations\":{\"$ANN\":null}}}" $M
# Everything else: 403, each with its message.
# denied WHAT REGEX METHOD PATH [BODY [TYPE]]: refused, 403, and the body says REGEX (TOK: the token
# used, the bound one by default).
denied() {
	local what=$1 re=$2 out
	shift 2
	out=$(API_TOKEN=${TOK:-$BOUND} api "$@")
	if echo "$out" | jq -e '.code == 403' >/dev/null && echo "$out" | grep -qE "$re"; then
		pass "$what"
	else
		fail "$what" "$(echo "$out" | jq -r '.message // .kind' 2>/dev/null | head -c 400)"
	fi
}
denied "the annotation on another node ($B): 403" "node agent of node $A may not write Node $B" \
	PATCH "/api/v1/nodes/$B" "$(merge "$ANN" "$line")" $M
denied "a label on its own node: 403" "may not change a Node's labels" \
	PATCH "/api/v1/nodes/$A" '{"metadata":{"labels":{"gpu-scheduler.io/node":"node1"}}}' $M
denied "the allowed-namespaces policy annotation: 403" "may change no annotation but" \
	PATCH "/api/v1/nodes/$A" "$(merge gpu-scheduler.io/allowed-namespaces "$NS")" $M
denied "a taint: 403" "may not change a Node's spec" \
	PATCH "/api/v1/nodes/$A" '{"spec":{"taints":[{"key":"x","effect":"NoSchedule"}]}}' $M
denied "spec.unschedulable: 403" "may not change a Node's spec" \
	PATCH "/api/v1/nodes/$A" '{"spec":{"unschedulable":true}}' $M
check "the node's status (RBAC grants no nodes/status): 403" equals 403 \
	as "$BOUND" PATCH "/api/v1/nodes/$A/status" '{"status":{"capacity":{"nvidia.com/gpu":"8"}}}' $M
check "delete its own node (RBAC grants no delete): 403" equals 403 as "$BOUND" DELETE "/api/v1/nodes/$A"
TOK=$UNBOUND denied "a token of the account bound to no pod names no node: 403" "token names no node" \
	PATCH "/api/v1/nodes/$A" "$(merge "$ANN" "$line")" $M
check "nothing changed on $A but what was allowed" eval \
	'[ -z "$(NS= kc get node "$A" -o jsonpath="{.metadata.labels.gpu-scheduler\.io/node}{.metadata.annotations.gpu-scheduler\.io/allowed-namespaces}{.spec.taints}{.spec.unschedulable}")" ]'

test_end
