#!/usr/bin/env bash
# Deploys into the cluster named by KUBECONFIG what `make demo` and the end-to-end tests run:
#
#   tests/cluster/deploy.sh scheduler      gpu-scheduler from deploy/ (kustomize base + the self-signed
#                                          certificate Component) into kube-system; waits until its pod
#                                          is Ready, the webhook's caBundle is set and the apiserver
#                                          gets a patch from the webhook (a dry-run pod)
#   tests/cluster/deploy.sh example NS     deploy/examples/gpu-scheduler-check.yaml and the same by
#                                          reference (check-statefulset-by-reference.yaml: a
#                                          GPUPlacementMap and its StatefulSet) in namespace NS (created
#                                          if missing); waits until both sets of five pods are Running
#                                          and the object's status is Ready
#   tests/cluster/deploy.sh render         rewrites deploy/install.yaml (make manifests): the same
#                                          overlay as one file, for kubectl without kustomize v3.7+
#
# `scheduler` applies the overlay with `kubectl apply -k` when kubectl embeds a kustomize that knows
# Components (kubectl >= 1.21), else deploy/install.yaml (Debian's kubectl is 1.20);
# tests/integration/test_deploy.sh checks that the file is the overlay rendered. With
# GS_DEPLOY_WITH=helm it installs the chart instead (charts/gpu-scheduler, release gpu-scheduler in
# kube-system, helm from tests/cluster/build-clients.sh; values for this cluster in the overlay
# directory, values.yaml), unless the release is there already; the waits are the same.
#
# The node agent (deploy/agent) reads /var/lib/kubelet/pod-resources on a real node. The test clusters'
# kubelets each have their own sockets' directory ($GS_CLUSTER_DIR/sockets/NAME, a short path under
# /run: tests/cluster/nodes.sh) and driver directory ($GS_CLUSTER_DIR/nodes/NAME/proc-driver/nvidia/gpus,
# written by the test device plugin): on a cluster.sh cluster in kubelet mode the agent mounts both
# read-only and finds its node's by $(NODE_NAME).
#
# The images must be on the nodes (cluster.sh imports build/images/*.tar). Environment: KUBECONFIG,
# GS_DEPLOY_TIMEOUT (seconds per wait, default 180), GS_OVERLAY_DIR (where the overlay is written,
# default build/deploy-overlay), GS_DEPLOY_WITH (kustomize, the default, or helm).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
TIMEOUT=${GS_DEPLOY_TIMEOUT:-180}
OVERLAY=${GS_OVERLAY_DIR:-$ROOT/build/deploy-overlay}

log() { printf 'deploy: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
kc() { "${TEST_ASSET_KUBECTL:-kubectl}" "$@"; }

# until_ok DESC CMD...: polls CMD every second for TIMEOUT seconds.
until_ok() {
	local desc=$1 deadline=$((SECONDS + TIMEOUT))
	shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $deadline ] || die "timed out after ${TIMEOUT}s waiting for $desc"
		sleep 1
	done
}

ca_bundle_set() {
	[ -n "$(kc get mutatingwebhookconfiguration gpu-scheduler -o jsonpath='{.webhooks[0].clientConfig.caBundle}')" ]
}

# The apiserver reaches the webhook through its Service and gets a patch: a server-side dry run of a pod
# of ours comes back with CUDA_VISIBLE_DEVICES set. Ready replicas are not enough: until kube-proxy
# has programmed the Service, the apiserver's calls are refused and the webhook fails open (once seen
# in CI: a test's pod created 4 s after the deploy went unmutated).
webhook_answers() {
	kc -n default create --dry-run=server -o jsonpath='{.spec.containers[0].env[*].name}' -f - <<'YAML' |
apiVersion: v1
kind: Pod
metadata:
  name: gs-webhook-probe-0
  annotations: {gpu-scheduling-map: "0=gs-webhook-probe:0"}
spec:
  schedulerName: gpu-scheduler
  containers: [{name: main, image: localhost/gs-pause:3.2}]
YAML
		grep -qw CUDA_VISIBLE_DEVICES
}

# Every replica Ready (deploy/deployment.yaml runs two: one leads, both serve the webhook).
scheduler_ready() {
	local want
	want=$(kc -n kube-system get deployment gpu-scheduler -o jsonpath='{.spec.replicas}')
	[ -n "$want" ] && [ "$(kc -n kube-system get deployment gpu-scheduler -o jsonpath='{.status.readyReplicas}')" = "$want" ]
}

server_minor() {
	kc version -o json 2>/dev/null | sed -n '/serverVersion/,$p' | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p' | head -n 1
}

# kustomize loads Components only from an overlay outside the base's directory. With "old" (a server
# before 1.21) the PodDisruptionBudget is policy/v1beta1 (deploy/k8s-1.20).
write_overlay() {
	local rel extra=
	mkdir -p "$OVERLAY"
	rel=$(realpath --relative-to="$OVERLAY" "$ROOT/deploy")
	[ "${1:-}" = old ] && extra=", $rel/k8s-1.20"
	printf 'resources: [%s]\ncomponents: [%s/self-signed%s]\n' "$rel" "$rel" "$extra" >"$OVERLAY/kustomization.yaml"
	if [ "${2:-}" = agent ] && [ -n "$(agent_patch)" ]; then
		printf 'patches:\n- target: {group: apps, kind: DaemonSet, name: gpu-scheduler-agent}\n  patch: |-\n' \
			>>"$OVERLAY/kustomization.yaml"
		agent_patch | sed 's/^/    /' >>"$OVERLAY/kustomization.yaml"
		# Placeholders run the sandbox image the nodes have (no registry is reachable here).
		printf -- '- target: {group: apps, kind: Deployment, name: gpu-scheduler}\n  patch: |-\n    %s\n' \
			'[{"op": "add", "path": "/spec/template/spec/containers/0/env/-", "value": {"name": "GS_PLACEHOLDER_IMAGE", "value": "localhost/gs-pause:3.2"}}]' \
			>>"$OVERLAY/kustomization.yaml"
	fi
}

# Every node runs a Ready agent.
agent_ready() {
	local want
	want=$(kc -n kube-system get daemonset gpu-scheduler-agent -o jsonpath='{.status.desiredNumberScheduled}')
	[ -n "$want" ] && [ "$want" -gt 0 ] &&
		[ "$(kc -n kube-system get daemonset gpu-scheduler-agent -o jsonpath='{.status.numberReady}')" = "$want" ]
}

# The agent's patch on a cluster.sh kubelet cluster (a JSON patch), or nothing elsewhere.
agent_patch() {
	local nodes=${GS_CLUSTER_DIR:-}/nodes socks
	[ -n "${GS_CLUSTER_DIR:-}" ] && [ -d "$nodes" ] || return 0
	socks=$(readlink -f "$GS_CLUSTER_DIR/sockets") || return 0
	cat <<EOF
[{"op": "replace", "path": "/spec/template/spec/containers/0/args", "value": ["agent", "--addr=0.0.0.0:10262",
  "--socket=/test-sockets/\$(NODE_NAME)/pod-resources/kubelet.sock",
  "--nvidia-proc-dir=/test-nodes/\$(NODE_NAME)/proc-driver/nvidia/gpus"]},
 {"op": "replace", "path": "/spec/template/spec/containers/0/volumeMounts/0/mountPath", "value": "/test-sockets"},
 {"op": "replace", "path": "/spec/template/spec/volumes/0/hostPath/path", "value": "$socks"},
 {"op": "add", "path": "/spec/template/spec/containers/0/volumeMounts/-", "value": {"name": "test-nodes", "mountPath": "/test-nodes", "readOnly": true}},
 {"op": "add", "path": "/spec/template/spec/volumes/-", "value": {"name": "test-nodes", "hostPath": {"path": "$nodes", "type": "Directory"}}}]
EOF
}

# The chart's values for this cluster: the images built here (tag latest, placeholders on the nodes'
# sandbox image) and, on a cluster.sh kubelet cluster, the agent's test paths as agent_patch gives them.
helm_values() {
	local nodes=${GS_CLUSTER_DIR:-}/nodes socks
	printf 'image: {tag: latest}\nextraArgs: ["--placeholder-image=localhost/gs-pause:3.2"]\n'
	[ -n "${GS_CLUSTER_DIR:-}" ] && [ -d "$nodes" ] || return 0
	socks=$(readlink -f "$GS_CLUSTER_DIR/sockets") || return 0
	cat <<EOF
agent:
  podResourcesDir: $socks
  socket: $socks/\$(NODE_NAME)/pod-resources/kubelet.sock
  extraArgs: ["--nvidia-proc-dir=/test-nodes/\$(NODE_NAME)/proc-driver/nvidia/gpus"]
  extraVolumes: [{name: test-nodes, hostPath: {path: "$nodes", type: Directory}}]
  extraVolumeMounts: [{name: test-nodes, mountPath: /test-nodes, readOnly: true}]
EOF
}

# The chart installed as release gpu-scheduler in kube-system, unless it is there (deployed) already.
helm_install() {
	local bin
	bin=$(tests/cluster/build-clients.sh) || die "no helm (tests/cluster/build-clients.sh failed)"
	if "$bin/helm" -n kube-system status gpu-scheduler >/dev/null 2>&1; then
		log "the Helm release gpu-scheduler is installed already"
		return 0
	fi
	mkdir -p "$OVERLAY"
	helm_values >"$OVERLAY/values.yaml"
	"$bin/helm" install gpu-scheduler charts/gpu-scheduler -n kube-system -f "$OVERLAY/values.yaml" >&2
}

kubectl_minor() {
	kc version --client -o json 2>/dev/null | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p' | head -n 1
}

cmd_scheduler() {
	# Kubernetes 1.20 does not label namespaces with their name yet (1.21 does): the webhook's
	# namespaceSelector needs it to leave kube-system alone (docs/deploy.md).
	kc label namespace kube-system kubernetes.io/metadata.name=kube-system --overwrite >/dev/null
	local age=
	[ "$(server_minor)" -lt 21 ] 2>/dev/null && age=old
	if [ "${GS_DEPLOY_WITH:-kustomize}" = helm ]; then
		helm_install
	elif [ "$(kubectl_minor)" -ge 21 ] 2>/dev/null; then
		write_overlay "$age" agent
		kc apply -k "$OVERLAY" >&2
	else
		log "kubectl $(kubectl_minor) predates kustomize Components: applying deploy/install.yaml"
		if [ "$age" = old ]; then
			sed 's#^apiVersion: policy/v1$#apiVersion: policy/v1beta1#' deploy/install.yaml | kc apply -f - >&2
		else
			kc apply -f deploy/install.yaml >&2
		fi
		[ -z "$(agent_patch)" ] ||
			kc -n kube-system patch daemonset gpu-scheduler-agent --type json -p "$(agent_patch)" >&2
	fi
	until_ok "gpu-scheduler Ready in kube-system" scheduler_ready
	until_ok "the webhook's caBundle (written by gpu-scheduler --webhook-self-signed)" ca_bundle_set
	until_ok "the webhook answering the apiserver through its Service (a dry-run pod mutated)" webhook_answers
	until_ok "the node agent Ready on every node (DaemonSet gpu-scheduler-agent)" agent_ready
	log "gpu-scheduler is Ready: $(kc -n kube-system get pods -l app.kubernetes.io/name=gpu-scheduler \
		-o jsonpath='{range .items[*]}{.metadata.name} on {.spec.nodeName}{"; "}{end}')"
}

crd_established() {
	[ "$(kc get crd gpuplacementmaps.gpu-scheduler.io -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" = True ]
}

# running_pods NS NAME: how many pods labelled app.kubernetes.io/name=NAME are Running.
running_pods() {
	kc -n "$1" get pods -l "app.kubernetes.io/name=$2" \
		-o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c '^Running$'
}

five_running() { [ "$(running_pods "$1" "$2")" = 5 ]; }

# gpm_ready NS NAME: the GPUPlacementMap's Ready condition (written by the leader) is True.
gpm_ready() {
	[ "$(kc -n "$1" get gpuplacementmap "$2" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

cmd_example() {
	local ns=${1:?namespace} byref=gpu-scheduler-check-byref
	kc get namespace "$ns" >/dev/null 2>&1 || kc create namespace "$ns" >/dev/null
	kc -n "$ns" apply -f deploy/examples/gpu-scheduler-check.yaml >&2
	# The CRD came with the scheduler (deploy/crd); its objects need it established. Polled: `kubectl
	# wait` errors out on a CRD so new it has no status.conditions yet.
	until_ok "the GPUPlacementMap CRD established" crd_established
	kc -n "$ns" apply -f deploy/examples/check-statefulset-by-reference.yaml >&2
	until_ok "the five gpu-scheduler-check pods Running in $ns" five_running "$ns" gpu-scheduler-check
	until_ok "the five $byref pods Running in $ns" five_running "$ns" "$byref"
	until_ok "GPUPlacementMap $ns/$byref Ready (its status, written by the leader)" gpm_ready "$ns" "$byref"
	log "the five gpu-scheduler-check pods and the five $byref pods are Running in $ns; GPUPlacementMap $byref is Ready"
}

cmd_render() {
	[ "$(kubectl_minor)" -ge 21 ] 2>/dev/null || die "rendering needs kubectl >= 1.21 (kustomize Components)"
	write_overlay
	{
		echo "# gpu-scheduler in kube-system with a self-signed webhook certificate: deploy/ with the"
		echo "# deploy/self-signed Component, rendered by \`make manifests\` (tests/cluster/deploy.sh render)."
		echo "# Do not edit: change deploy/ and render again. kubectl apply -f deploy/install.yaml"
		kc kustomize "$OVERLAY"
	} >deploy/install.yaml.tmp
	mv deploy/install.yaml.tmp deploy/install.yaml
	log "wrote deploy/install.yaml"
}

case ${GS_DEPLOY_WITH:-kustomize} in kustomize | helm) ;; *) die "GS_DEPLOY_WITH=$GS_DEPLOY_WITH: not kustomize or helm" ;; esac
case ${1:-} in
scheduler) cmd_scheduler ;;
render) cmd_render ;;
example) shift; cmd_example "$@" ;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
