#!/usr/bin/env bash
# The local demo behind `make demo`, on real nodes: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and kube-proxy (Kubernetes 1.37.2, etcd 3.7.3 and containerd 2.4.2 built from their Go
# modules, cached), four kubelets node1..node4 each with its own containerd, the images built here with buildah and imported
# into every node; gpu-scheduler deployed into kube-system from its image through deploy/ (in-cluster
# config, the webhook reached through its Service), then the example StatefulSet and, beside it, the
# same service by reference (deploy/examples/check-statefulset-by-reference.yaml: its map in a
# GPUPlacementMap). When the ten pods run, it prints `kubectl get pod -o wide -A`, the logs of the pods
# on node3 and node4, the verdict of deploy/examples/verify.sh for each StatefulSet (the first the same
# as deploy/kind/demo.sh's: each pod where its map says) and `kubectl get gpuplacementmaps`.
#
#   scripts/demo.sh up      (make demo)       leaves everything running; KUBECONFIG is printed
#                           GS_DEPLOY_WITH=helm (make demo DEPLOY=helm): from the chart, not deploy/
#   scripts/demo.sh down    (make demo-down)
#   scripts/demo.sh show    prints the two outputs again (the cluster must be up)
#
# As root on Debian bookworm with cgroup v1 hierarchies (see docs/cluster.md). Only one cluster with
# real nodes runs on a machine at a time (the nodes' cgroups and bridges have fixed names).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export GS_CLUSTER_DIR=${GS_DEMO_DIR:-$ROOT/build/demo}
export GS_APISERVER_PORT=${GS_DEMO_APISERVER_PORT:-26443}
export GS_ETCD_PORT=${GS_DEMO_ETCD_PORT:-22379}
export GS_NODE_MODE=kubelet
export GS_OVERLAY_DIR=$GS_CLUSTER_DIR/overlay
NS=gpu-demo

say() { printf '\n=== demo: %s\n' "$*"; }

# What the demo shows: every pod, the logs of the pods on node3 and node4, the verdicts, and the status
# the scheduler writes to the GPUPlacementMap (exits 1 when a pod is not where its map says).
show() {
	local rc=0
	deploy/examples/verify.sh -n "$NS" --show node3,node4 || rc=1
	printf '\n== by reference: deploy/examples/verify.sh -n %s --name gpu-scheduler-check-byref\n' "$NS"
	deploy/examples/verify.sh -n "$NS" --name gpu-scheduler-check-byref || rc=1
	printf '\n== kubectl -n %s get gpuplacementmaps\n' "$NS"
	kubectl -n "$NS" get gpuplacementmaps || rc=1
	return $rc
}

case ${1:-up} in
down)
	tests/cluster/cluster.sh down
	exit 0
	;;
show)
	# shellcheck disable=SC1091
	. "$GS_CLUSTER_DIR/env"
	show
	exit 0
	;;
up) ;;
*) echo "usage: $0 [up|down|show]" >&2; exit 2 ;;
esac

say "dependencies (tests/deps.sh), build, Kubernetes 1.37.2, etcd and containerd from their Go modules (cached; ~8 min the first time)"
tests/deps.sh
make -s all
tests/cluster/prepare.sh

say "images gpu-scheduler and gpu-scheduler-check (buildah; the base is cached)"
tests/cluster/images.sh all

say "control plane, kube-scheduler, kube-proxy, and kubelets node1..node4"
tests/cluster/cluster.sh down >/dev/null 2>&1 || true
tests/cluster/cluster.sh up
# shellcheck disable=SC1091
. "$GS_CLUSTER_DIR/env"
kubectl get nodes -owide

if [ "${GS_DEPLOY_WITH:-kustomize}" = helm ]; then
	say "gpu-scheduler into kube-system from the Helm chart (helm install gpu-scheduler charts/gpu-scheduler; self-signed webhook certificate)"
else
	say "gpu-scheduler into kube-system from deploy/ (self-signed webhook certificate)"
fi
tests/cluster/deploy.sh scheduler

say "the example StatefulSet (deploy/examples/gpu-scheduler-check.yaml) and the same by reference (check-statefulset-by-reference.yaml) in namespace $NS"
tests/cluster/deploy.sh example "$NS"

show
say "running; KUBECONFIG=$KUBECONFIG; stop with: make demo-down"
