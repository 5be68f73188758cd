# shellcheck shell=bash
# tests/e2e/common.sh: the scheduler deployed through deploy/ on the e2e cluster, as the e2e tests see
# it; sourced after tests/lib.sh.
#
#   sched_pods     the Running gpu-scheduler pods in kube-system, one name per line
#   leader_pod     the pod holding the Lease (its holderIdentity is "<pod name>_<random suffix>")
#   container_pid NS POD   the host PID of the pod's first container, from its node's containerd

sched_pods() {
	NS=kube-system kc get pods -l app.kubernetes.io/name=gpu-scheduler \
		-o jsonpath='{range .items[?(@.status.phase=="Running")]}{.metadata.name}{"\n"}{end}'
}

leader_pod() {
	NS=kube-system kc get lease gpu-scheduler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null | sed 's/_[0-9a-f]*$//'
}

# container_pid NS POD: the host PID of the pod's first container, from its node's containerd.
container_pid() {
	local node id
	node=$(NS=$1 kc get pod "$2" -o jsonpath='{.spec.nodeName}')
	id=$(NS=$1 kc get pod "$2" -o jsonpath='{.status.containerStatuses[0].containerID}')
	id=${id#containerd://}
	[ -n "$id" ] || return 1
	ctr -a "$GS_CLUSTER_DIR/nodes/$node/containerd.sock" -n k8s.io tasks ls | awk -v id="$id" '$1 == id { print $2 }'
}
