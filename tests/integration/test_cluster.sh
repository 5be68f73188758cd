#!/usr/bin/env bash
# The harness itself: what tests/cluster/cluster.sh promises the other integration tests.
# Nodes, workloads that stay pending for our scheduler, service-account tokens, the webhook admission
# plugin, binding and forced deletion, an apiserver restart.
. "$(dirname "$0")/../lib.sh"
test_begin

# ---- nodes -----------------------------------------------------------------------------------

node_ok() {
	local n=$1 ready gpu cap taints
	ready=$(kc get node "$n" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') || return 1
	gpu=$(kc get node "$n" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')
	cap=$(kc get node "$n" -o jsonpath='{.status.capacity.nvidia\.com/gpu}')
	taints=$(kc get node "$n" -o jsonpath='{.spec.taints}')
	if [ "$ready" != True ] || [ "$gpu" != "$GS_NODE_GPUS" ] || [ "$cap" != "$GS_NODE_GPUS" ] || [ -n "$taints" ]; then
		echo "$n: Ready=$ready gpu=$gpu/$cap taints=$taints"
		return 1
	fi
}

all_nodes_ok() {
	local i
	for i in $(seq 1 "$GS_NODES"); do node_ok "node$i" || return 1; done
	[ "$(kc get nodes -o name | grep -c .)" = "$GS_NODES" ]
}

check "nodes node1..node$GS_NODES Ready, untainted, nvidia.com/gpu=$GS_NODE_GPUS" all_nodes_ok

# ---- workloads for our scheduler stay pending ------------------------------------------------

pods_pending_for_us() {
	local sel=$1 want=$2 out
	out=$(kc get pods -l "$sel" -o jsonpath='{range .items[*]}{.status.phase}/{.spec.schedulerName}/{.spec.nodeName}{"\n"}{end}')
	[ "$(printf '%s\n' "$out" | grep -c "^Pending/$SCHEDULER_NAME/\$")" = "$want" ] || { echo "$out"; return 1; }
}

check "StatefulSet created" kc apply -f - <<<"$(statefulset_yaml web 3 '0=node1:0,1' '1=node2:0' '2=node3:2,3')"
check_eventually "StatefulSet pods web-0..2 exist, Pending, schedulerName $SCHEDULER_NAME" 30 \
	pods_pending_for_us app=web 3
check "the template's $GS_ANNOTATION annotation is on the pods" \
	equals "$(printf '0=node1:0,1\n1=node2:0\n2=node3:2,3')" kc get pod web-1 -o "jsonpath={.metadata.annotations.$GS_ANNOTATION}"

check "Job created" kc apply -f - <<<"$(POD_GPUS=1 job_yaml train 2 2)"
check_eventually "Job pods exist, Pending, schedulerName $SCHEDULER_NAME" 30 pods_pending_for_us app=train 2
check "Job pods carry the nvidia.com/gpu limit" \
	equals 1 kc get pods -l app=train -o 'jsonpath={.items[0].spec.containers[0].resources.limits.nvidia\.com/gpu}'

# ---- binding as a scheduler does, and the cleanup of bound pods ------------------------------

check "binding web-0 to node1" bind_pod web-0 node1
check "web-0 is bound to node1 with PodScheduled=True" equals node1/True \
	kc get pod web-0 -o 'jsonpath={.spec.nodeName}/{.status.conditions[?(@.type=="PodScheduled")].status}'
check "a second binding answers 409" equals 409 api_code POST "/api/v1/namespaces/$NS/pods/web-0/binding" \
	'{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web-0"},"target":{"kind":"Node","name":"node2"}}'
kc scale statefulset web --replicas 0 >/dev/null
force_delete_pods app=web
check_eventually "bound pods go with grace period 0" 20 pod_count_is 0 app=web

# ---- service-account tokens ------------------------------------------------------------------

token_user() {
	# TokenReview: who the apiserver takes this token for.
	api POST /apis/authentication.k8s.io/v1/tokenreviews \
		"{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\",\"spec\":{\"token\":\"$1\"}}" |
		jq -r 'if .status.authenticated then .status.user.username else "unauthenticated" end'
}

# The token controller fills a Secret of type service-account-token that names the account (since 1.24
# it no longer makes one by itself for every account).
sa_secret_token() {
	local t
	t=$(kc get secret robot-token -o jsonpath='{.data.token}') && [ -n "$t" ] && base64 -d <<<"$t"
}

check "ServiceAccount robot created" kc create serviceaccount robot
check "a Secret of type service-account-token for robot created" eval 'kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: robot-token
  annotations: {kubernetes.io/service-account.name: robot}
type: kubernetes.io/service-account-token
YAML'
check_eventually "the token controller fills it with robot's token" 20 sa_secret_token
check "robot's secret token authenticates as system:serviceaccount:$NS:robot" \
	equals "system:serviceaccount:$NS:robot" token_user "$(sa_secret_token)"
minted=$(api POST "/api/v1/namespaces/$NS/serviceaccounts/robot/token" \
	'{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":600}}' |
	jq -r .status.token)
check "TokenRequest mints a bound token" test -n "$minted" -a "$minted" != null
check "the minted token authenticates as robot" equals "system:serviceaccount:$NS:robot" token_user "$minted"
check "robot is authenticated but not authorized to list pods (403, not 401)" \
	equals 403 as_token "$minted" api_code GET "/api/v1/namespaces/$NS/pods"
check "an unknown token is refused with 401" equals 401 as_token nope api_code GET "/api/v1/namespaces/$NS/pods"
check_eventually "the default ServiceAccount appears in a new namespace" 20 kc get serviceaccount default -o name
check_eventually "kube-root-ca.crt is published" 20 kc get configmap kube-root-ca.crt -o name

# ---- the mutating webhook admission plugin is on ---------------------------------------------
# A webhook nobody serves, failurePolicy Fail, limited to one label in this namespace: creating a
# labelled pod must fail because the apiserver called it.

hook=gs-test-$NS
defer "NS='' kc delete mutatingwebhookconfiguration $hook --ignore-not-found >/dev/null"
check "MutatingWebhookConfiguration created" kc apply -f - <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $hook
webhooks:
- name: unserved.gpu-scheduler.test
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 2
  clientConfig:
    url: https://127.0.0.1:1/mutate
    caBundle: $(base64 -w0 <"$GS_CLUSTER_CA")
  rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    operations: ["CREATE"]
    resources: ["pods"]
  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: $NS
  objectSelector:
    matchLabels:
      gs-webhook-probe: "yes"
EOF
# 1.20 has no automatic kubernetes.io/metadata.name label (1.21+): set it.
kc label namespace "$NS" "kubernetes.io/metadata.name=$NS" --overwrite >/dev/null
probe_refused() {
	local out
	out=$(kc run probe --image=busybox:stable --image-pull-policy=Never --labels=gs-webhook-probe=yes \
		--restart=Never --command -- true 2>&1)
	kc delete pod probe --ignore-not-found --grace-period=0 --force >/dev/null 2>&1
	printf '%s\n' "$out" | grep -q 'failed calling webhook' || { echo "$out"; return 1; }
}
check_eventually "the apiserver calls the mutating webhook (MutatingAdmissionWebhook on)" 15 probe_refused

# ---- an apiserver restart keeps the cluster ------------------------------------------------------

if [ "${GS_SKIP_RESTART:-0}" != 1 ]; then
	check "cluster.sh restart-apiserver" restart_apiserver
	check "the apiserver answers after the restart" equals ok api GET /readyz
	check "nodes survive the restart" all_nodes_ok
	check "the Job's pods survive the restart" pods_pending_for_us app=train 2
fi

test_end
