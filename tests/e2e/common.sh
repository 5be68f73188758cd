# shellcheck shell=bash
# tests/e2e/common.sh: the scheduler deployed through deploy/ on the e2e cluster, as the e2e tests see
# it; sourced after tests/lib.sh.
#
#   deploy_scheduler  gpu-scheduler and its agent from deploy/, or from the Helm chart when
#                  GS_DEPLOY_WITH=helm (tests/cluster/deploy.sh scheduler, the overlay or values in the
#                  cluster's directory); waits until they are Ready. DEPLOYED_FROM says which, for messages
#   sched_pods     the Running gpu-scheduler pods in kube-system, one name per line
#   leader_pod     the pod holding the Lease (its holderIdentity is "<pod name>_<random suffix>")
#   node_names     R[1..4]: the node each of node1..node4 means (itself, or with GS_NODE_NAMES the node
#                  labelled gpu-scheduler.io/node=nodeI); W[1..4]: how messages introduce a check there
#   phase_node POD, running_on POD NODE, events_of POD, event_has POD REGEX
#                  a pod's "PHASE NODE"; test forms; its events' "REASON: MESSAGE" lines
#   node_socket NODE FILE  FILE in the node's sockets' directory, by its short path (a socket's path
#                  holds at most 107 bytes; the directory is under /run, linked from $GS_CLUSTER_DIR/sockets)
#   container_pid NS POD   the host PID of the pod's first container, from its node's containerd
#   check_pod NAME ENTRY [SPEC_EXTRA [META_EXTRA]]   a bare pod of ours running the check image (YAML)
#   needs_device_plugin  ends the test, skipped, when the cluster runs without the device plugin
#   plugin_pod           a default-scheduler pod asking GPUs (or replicas) of the device plugin

deploy_scheduler() { env GS_OVERLAY_DIR="$GS_CLUSTER_DIR/overlay" "$GS_ROOT/tests/cluster/deploy.sh" scheduler; }
if [ "${GS_DEPLOY_WITH:-kustomize}" = helm ]; then
	DEPLOYED_FROM="the Helm chart"
else
	DEPLOYED_FROM="deploy/"
fi

sched_pods() {
	NS=kube-system kc get pods -l app.kubernetes.io/name=gpu-scheduler \
		-o jsonpath='{range .items[?(@.status.phase=="Running")]}{.metadata.name}{"\n"}{end}'
}

leader_pod() {
	NS=kube-system kc get lease gpu-scheduler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null | sed 's/_[0-9a-f]*$//'
}

node_names() {
	local i
	R=() W=()
	for i in 1 2 3 4; do
		R[i]=$(node_real "node$i")
		W[i]=$(node_who_re "node$i")
	done
}

phase_node() { kc get pod "$1" -o jsonpath='{.status.phase} {.spec.nodeName}' 2>/dev/null; }
running_on() { [ "$(phase_node "$1")" = "Running $2" ] || { echo "$1: $(phase_node "$1")"; return 1; }; }
events_of() { kc get events --field-selector "involvedObject.name=$1" -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}'; }
event_has() { events_of "$1" | grep -qE "$2" || { echo "events of $1:"; events_of "$1"; return 1; }; }

node_socket() { echo "$(readlink -f "$GS_CLUSTER_DIR/sockets/$1")/$2"; }

# container_pid NS POD: the host PID of the pod's first container, from its node's containerd.
container_pid() {
	local node id
	node=$(NS=$1 kc get pod "$2" -o jsonpath='{.spec.nodeName}')
	id=$(NS=$1 kc get pod "$2" -o jsonpath='{.status.containerStatuses[0].containerID}')
	id=${id#containerd://}
	[ -n "$id" ] || return 1
	"${GS_CTR:-ctr}" -a "$(node_socket "$node" containerd.sock)" -n k8s.io tasks ls | awk -v id="$id" '$1 == id { print $2 }'
}

# check_pod NAME ENTRY [SPEC_EXTRA [META_EXTRA]]: a bare check pod of ours.
check_pod() {
	cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations: {gpu-scheduling-map: "$2"}
${4:-}
spec:
  schedulerName: $SCHEDULER_NAME
  terminationGracePeriodSeconds: 1
  automountServiceAccountToken: false
  enableServiceLinks: false
  securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532}
${3:-}
  containers:
  - name: check
    image: gpu-scheduler-check:latest
    imagePullPolicy: IfNotPresent
    env:
    - {name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: CHECK_INTERVAL, value: "5"}
YAML
}

# plugin_pod NAME NODE [RESOURCE] [COUNT]: a default-scheduler pod on NODE (by its hostname label)
# asking COUNT (1) of RESOURCE (nvidia.com/gpu) from the device plugin: the pods of other schedulers that
# the agent's data names.
plugin_pod() {
	kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  nodeSelector: {kubernetes.io/hostname: $2}
  terminationGracePeriodSeconds: 0
  automountServiceAccountToken: false
  containers:
  - name: main
    image: localhost/gs-pause:3.2
    imagePullPolicy: Never
    resources:
      limits: {${3:-nvidia.com/gpu}: "${4:-1}", cpu: 50m, memory: 16Mi}
YAML
}

# needs_device_plugin: the test ends here, skipped, on a cluster without the test device plugin.
needs_device_plugin() {
	if [ "${GS_DEVICE_PLUGIN:-1}" != 1 ]; then
		echo "  skipped: the cluster runs without the device plugin"
		test_end
	fi
}
