#!/usr/bin/env bash
# The Helm chart on real kubelets (issue 32), in the end-to-end pass whose gpu-scheduler comes from the
# chart (GS_DEPLOY_WITH=helm: run-all's second pass, on kind-named nodes, where every other e2e test runs
# on the chart's install too). In a pass that deploys deploy/ it says so and records nothing.
#   - helm install (tests/cluster/deploy.sh): the release is deployed, its objects are Helm's
#   - helm upgrade with a changed value (a pod annotation) rolls the Deployment to a new ReplicaSet while
#     pods are created through the apiserver the whole time: every one of them is mutated and the
#     apiserver logged no failed call to the webhook
#   - helm test: the chart's test pod, mapped to the first GPU node's GPU 0 (looked up at upgrade), runs
#     there with CUDA_VISIBLE_DEVICES=0 and Succeeds
#   - helm rollback to the revision before: the annotation is gone, the Deployment rolled back, Ready
#   - helm uninstall: no webhook configuration, workload, Service, Secret or RBAC of the release left;
#     the CRD stays (Helm's rule for crds/), so does the Lease the replicas made; then installed again for
#     the tests after this one
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
if [ "${GS_DEPLOY_WITH:-kustomize}" != helm ]; then
	echo "  gpu-scheduler comes from deploy/ in this pass: the chart's e2e runs in the pass that installs it (GS_DEPLOY_WITH=helm)"
	exit 0
fi
test_begin

HELM=$("$GS_ROOT/tests/cluster/build-clients.sh")/helm
hk() { "$HELM" --kubeconfig "$KUBECONFIG" -n kube-system "$@"; }
R=gpu-scheduler
VALUES=$GS_CLUSTER_DIR/overlay/values.yaml
HOOK=mutate.gpu-scheduler.io

check "gpu-scheduler deployed ($DEPLOYED_FROM, self-signed certificate)" deploy_scheduler
check "helm status: release $R deployed" eval 'hk status $R -o json | jq -e ".info.status == \"deployed\"" >/dev/null'
check "its Deployment and agent DaemonSet are Helm's" eval \
	'[ "$(NS=kube-system kc get deployment/$R daemonset/$R-agent -o jsonpath="{range .items[*]}{.metadata.labels.app\.kubernetes\.io/managed-by}{\" \"}{end}")" = "Helm Helm " ]'

revision() { hk status $R -o json | jq -r .version; }
rev0=$(revision)
rs_hash() { # the pod-template-hash of every pod of the Deployment, sorted unique; a replaced pod counts
	# until it is gone, terminal phase included (the kubelet sets Succeeded or Failed before its removal)
	NS=kube-system kc get pods -l app.kubernetes.io/name=$R \
		-o jsonpath='{range .items[*]}{.metadata.labels.pod-template-hash}{"\n"}{end}' | sort -u
}
ready() {
	[ "$(NS=kube-system kc get deployment $R -o jsonpath='{.status.updatedReplicas}/{.status.readyReplicas}/{.status.replicas}')" = 2/2/2 ] &&
		[ "$(rs_hash | wc -l)" = 1 ]
}
check_eventually "two replicas Ready, of one ReplicaSet" 120 ready
hash0=$(rs_hash)

# ---- upgrade: a changed value rolls the Deployment; the webhook answers throughout ----------------------
failed_calls() { grep -c "Failed calling webhook.*$HOOK" "$GS_CLUSTER_DIR/logs/kube-apiserver.log"; }
failed0=$(failed_calls)
mkdir -p "$GS_TEST_LOGS"
work=$(test_workdir)
# Pods mapped to a node that does not exist (they stay Pending), 5 a second until the stop file is made.
for ((i = 0; i < 2000; i++)); do
	[ -e "$work/stop" ] && break
	echo "POST /api/v1/namespaces/$NS/pods application/json {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"u-$i\",\"annotations\":{\"$GS_ANNOTATION\":\"$i=no-such-node:$((i % 4))\"}},\"spec\":{\"schedulerName\":\"$SCHEDULER_NAME\",\"terminationGracePeriodSeconds\":0,\"containers\":[{\"name\":\"main\",\"image\":\"localhost/gs-pause:3.2\",\"imagePullPolicy\":\"Never\"}]}}"
	sleep 0.2
done | python3 "$GS_ROOT/tests/tools/apireq.py" --threads 2 >"$work/create.log" 2>&1 &
creator=$!
defer "touch '$work/stop'; kill $creator 2>/dev/null || true"
check_eventually "pods are being created through the apiserver" 30 eval '[ "$(pod_count)" -ge 5 ]'
n0=$(pod_count)
check "helm upgrade with a new pod annotation" eval \
	'hk upgrade $R "$GS_ROOT/charts/gpu-scheduler" -f "$VALUES" --set podAnnotations.gs-e2e-rollout=two >"$work/upgrade.out" 2>&1 ||
	{ cat "$work/upgrade.out"; false; }'
check "revision $((rev0 + 1))" equals $((rev0 + 1)) revision
check_eventually "the Deployment rolled: two new replicas Ready, the old ReplicaSet's pods gone" 180 eval \
	'ready && [ "$(rs_hash)" != "$hash0" ]'
check "the new replicas carry the annotation" eval \
	'[ "$(NS=kube-system kc get pods -l app.kubernetes.io/name=$R -o jsonpath="{range .items[*]}{.metadata.annotations.gs-e2e-rollout}{\" \"}{end}")" = "two two " ]'
hash1=$(rs_hash)
n1=$(pod_count)
check "they were created while it rolled ($n0 before the upgrade, $n1 when it was done)" test "$n1" -gt $((n0 + 10))
sleep 3
touch "$work/stop"
wait "$creator"
n=$(pod_count)
echo "  $n pods created during the upgrade"
check "every pod created during the upgrade was created ($(tail -n 1 "$work/create.log"))" grep -q "^ok $n failed 0" "$work/create.log"
unmutated() {
	kc get pods -o json | jq -r '.items[] | select([.spec.containers[].env // [] | .[] |
		select(.name == "CUDA_VISIBLE_DEVICES")] | length == 0) | .metadata.name'
}
check "every one of them carries CUDA_VISIBLE_DEVICES (the webhook answered throughout)" eval '[ -z "$(unmutated)" ]'
check "the apiserver logged no failed call to the webhook" equals "$failed0" failed_calls
kc delete pods --all --wait=false >/dev/null 2>&1
force_delete_pods ''

# ---- helm test --------------------------------------------------------------------------------------------
tnode=$(hk get hooks $R | python3 -c '
import sys, yaml
for d in yaml.safe_load_all(sys.stdin):
    if d and d["kind"] == "Pod":
        print(*[e["value"] for e in d["spec"]["containers"][0]["env"] if e["name"] == "WANT_NODE"])')
first_gpu_node=$(NS= kc get nodes -o json | jq -r '[.items[] | select((.status.allocatable["nvidia.com/gpu"] // "0") != "0") | .metadata.name] | sort | .[0]')
check "the test pod is mapped to the first GPU node, $first_gpu_node (looked up at the upgrade)" test "$tnode" = "$first_gpu_node"
check "helm test: the mapped pod ran there with CUDA_VISIBLE_DEVICES=0" eval \
	'hk test $R --timeout 120s >"$work/test.out" 2>&1 || { cat "$work/test.out"; false; }'
# (Not helm test --logs: it looks for the pod in the release's namespace.)
check "its log says so" eval 'NS=default kc logs $R-test-0 | grep -qx "bound to $first_gpu_node, CUDA_VISIBLE_DEVICES=0; the map says $first_gpu_node and 0"'
check "the test pod Succeeded" equals Succeeded eval "NS=default kc get pod $R-test-0 -o jsonpath='{.status.phase}'"

# ---- rollback ------------------------------------------------------------------------------------------------
check "helm rollback to revision $rev0" eval 'hk rollback $R "$rev0" >"$work/rollback.out" 2>&1 || { cat "$work/rollback.out"; false; }'
check "revision $((rev0 + 2)), a rollback to $rev0" eval \
	'hk history $R -o json | jq -e ".[-1].revision == $((rev0 + 2)) and (.[-1].description | test(\"Rollback to $rev0\"))" >/dev/null'
check "the Deployment's template has no annotation any more" equals "" \
	eval 'NS=kube-system kc get deployment $R -o jsonpath="{.spec.template.metadata.annotations.gs-e2e-rollout}"'
check_eventually "it rolled back: two replicas Ready, of another ReplicaSet than the upgrade's" 180 eval \
	'ready && [ "$(rs_hash)" != "$hash1" ]'
check_eventually "the webhook answers the apiserver again" 60 eval 'NS=default kc create --dry-run=server -o json -f - <<<"$(check_pod gs-helm-probe-0 0=gs-helm-probe:1)" |
	jq -e ".spec.containers[0].env[] | select(.name == \"CUDA_VISIBLE_DEVICES\" and .value == \"1\")" >/dev/null'

# ---- uninstall -----------------------------------------------------------------------------------------------
check "helm uninstall" eval 'hk uninstall $R --wait=watcher --timeout 120s >"$work/uninstall.out" 2>&1 || { cat "$work/uninstall.out"; false; }'
check "no webhook configuration, ClusterRole, binding or policy of the release left" eval \
	'[ -z "$(NS= kc get mutatingwebhookconfiguration,clusterrole,clusterrolebinding,validatingadmissionpolicy,validatingadmissionpolicybinding -o name | grep "/$R")" ]'
check "nothing of the release left in kube-system" eval \
	'[ -z "$(NS=kube-system kc get deployment,daemonset,service,secret,serviceaccount,role,rolebinding,networkpolicy,poddisruptionbudget -o name | grep "/$R")" ]'
check_eventually "its pods are gone" 90 eval '[ -z "$(NS=kube-system kc get pods -o name | grep "/$R")" ]'
check "the CRD stays (Helm never deletes crds/)" eval 'NS= kc get crd gpuplacementmaps.gpu-scheduler.io >/dev/null'
check "so does the Lease the replicas made (the README says so)" eval 'NS=kube-system kc get lease $R >/dev/null'
# Helm keeps a test pod whose policy is before-hook-creation (for its logs): it goes by hand.
NS=default kc delete pod $R-test-0 --ignore-not-found --wait=false >/dev/null 2>&1

check "installed again for the tests after this one" deploy_scheduler
test_end
