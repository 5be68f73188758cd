#!/usr/bin/env bash
# The demo on kind: a five-node cluster (four workers labelled gpu-scheduler.io/node=node1..node4, kind
# naming them CLUSTER-worker..CLUSTER-worker4), the scheduler deployed with `kubectl apply -k deploy/`
# (its --node-alias-label default resolves the map's node1..node4 through that label), the
# five-replica check StatefulSet placed by it, and a check that every pod landed on the node whose
# label its map entry names, with the CUDA_VISIBLE_DEVICES it says.
#
#   make kind-demo                      (= deploy/kind/demo.sh)
#   KIND_CLUSTER=name deploy/kind/demo.sh
#   kind delete cluster --name gpu-scheduler     (to clean up)
#
# Needs kind, kubectl and a container engine kind can use (Docker, or Podman with
# KIND_EXPERIMENTAL_PROVIDER=podman). The images are taken from build/images/*.tar when present
# (`make images` builds them with buildah); otherwise they are built here with docker or podman from the
# Containerfiles. Exits non-zero when a pod is missing or misplaced.
set -euo pipefail

cd "$(dirname "$0")/../.."
CLUSTER=${KIND_CLUSTER:-gpu-scheduler}
CTX="kind-$CLUSTER"
K="kubectl --context $CTX"
IMAGES=build/images
TIMEOUT=${DEMO_TIMEOUT:-180s}

log() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'kind-demo: error: %s\n' "$*" >&2; exit 1; }

command -v kind >/dev/null || die "kind is not installed (https://kind.sigs.k8s.io/docs/user/quick-start/)"
command -v kubectl >/dev/null || die "kubectl is not installed"

# --- images ---------------------------------------------------------------------------------------
engine=
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
	engine=docker
elif command -v podman >/dev/null; then
	engine=podman
fi
build_archive() { # NAME CONTAINERFILE
	local name=$1 file=$2
	[ -s "$IMAGES/$name.tar" ] && return 0
	[ -n "$engine" ] || die "$IMAGES/$name.tar is missing and there is no docker or podman to build it (run make images)"
	log "building $name:latest with $engine"
	mkdir -p "$IMAGES"
	"$engine" build -f "$file" -t "$name:latest" .
	# docker-archive format with the tag kind's containerd will look up (docker.io/library/NAME:latest).
	if [ "$engine" = podman ]; then
		podman tag "localhost/$name:latest" "docker.io/library/$name:latest"
		podman save --format docker-archive -o "$IMAGES/$name.tar" "docker.io/library/$name:latest"
	else
		docker save -o "$IMAGES/$name.tar" "$name:latest"
	fi
}
build_archive gpu-scheduler Containerfile
build_archive gpu-scheduler-check check/Containerfile

# --- cluster --------------------------------------------------------------------------------------
if kind get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
	log "reusing kind cluster $CLUSTER"
else
	log "creating kind cluster $CLUSTER (1 control plane, 4 workers labelled node1..node4)"
	kind create cluster --name "$CLUSTER" --config deploy/kind/kind-config.yaml --wait "$TIMEOUT"
fi
$K wait --for=condition=Ready node --all --timeout="$TIMEOUT"
$K get nodes -L gpu-scheduler.io/node

# The node each map name means: the one worker whose gpu-scheduler.io/node label has that value.
node_for() {
	local nodes
	nodes=$($K get nodes -l "gpu-scheduler.io/node=$1" -o jsonpath='{.items[*].metadata.name}')
	case $nodes in
	*' '*) die "several nodes carry gpu-scheduler.io/node=$1 ($nodes): the scheduler would not bind there" ;;
	'') die "no node carries gpu-scheduler.io/node=$1 (was the cluster made from deploy/kind/kind-config.yaml?)" ;;
	esac
	echo "$nodes"
}
for alias in node1 node2 node3 node4; do
	node=$(node_for "$alias") # exits (set -e) when none or several
	printf '%s is node %s\n' "$alias" "$node"
done

log "loading the images into every node"
kind load image-archive "$IMAGES/gpu-scheduler.tar" --name "$CLUSTER"
kind load image-archive "$IMAGES/gpu-scheduler-check.tar" --name "$CLUSTER"

# --- scheduler ------------------------------------------------------------------------------------
log "deploying the scheduler (kubectl apply -k deploy/)"
# Clusters before 1.21 do not label namespaces with their name; the webhook's selector needs it.
$K label namespace kube-system kubernetes.io/metadata.name=kube-system --overwrite >/dev/null
$K apply -k deploy/
KUBECTL="$K" deploy/webhook-cert.sh
# A reused cluster runs the old image under the same tag: restart to pick up the one just loaded.
$K -n kube-system rollout restart deployment/gpu-scheduler >/dev/null
$K -n kube-system rollout status deployment/gpu-scheduler --timeout="$TIMEOUT"

# --- the check service ----------------------------------------------------------------------------
log "running the check StatefulSet"
# Recreated from scratch, so that every pod goes through the webhook and the scheduler again.
$K delete statefulset gpu-scheduler-check --ignore-not-found --wait=true >/dev/null
$K delete pod -l app.kubernetes.io/name=gpu-scheduler-check --ignore-not-found --wait=true >/dev/null
$K apply -f deploy/examples/gpu-scheduler-check.yaml
$K rollout status statefulset/gpu-scheduler-check --timeout="$TIMEOUT" || true
$K wait --for=condition=Ready pod -l app.kubernetes.io/name=gpu-scheduler-check --timeout="$TIMEOUT" || true

log "scheduler log (last 20 lines)"
$K -n kube-system logs deployment/gpu-scheduler --tail=20 || true

# --- verdict --------------------------------------------------------------------------------------
# Every pod on the node its map entry names (by the gpu-scheduler.io/node label here), with its devices:
# deploy/examples/verify.sh, the same verdict as make demo's.
KUBECTL="$K" deploy/examples/verify.sh --show node3,node4 || die "some pods are not where the map puts them"
printf '\nkind-demo: all 5 pods placed as mapped. Clean up with: kind delete cluster --name %s\n' "$CLUSTER"
