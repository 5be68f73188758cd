# shellcheck shell=bash
# tests/e2e/common.sh: the scheduler deployed through deploy/ on the e2e cluster, as the e2e tests see
# it; sourced after tests/lib.sh.
#
#   sched_pods     the Running gpu-scheduler pods in kube-system, one name per line
#   leader_pod     the pod holding the Lease (its holderIdentity is "<pod name>_<random suffix>")

sched_pods() {
	NS=kube-system kc get pods -l app.kubernetes.io/name=gpu-scheduler \
		-o jsonpath='{range .items[?(@.status.phase=="Running")]}{.metadata.name}{"\n"}{end}'
}

leader_pod() {
	NS=kube-system kc get lease gpu-scheduler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null | sed 's/_[0-9a-f]*$//'
}
