#!/usr/bin/env bash
# make bench / bench-smoke / bench-webhook: starts a control plane of its own (own directory and
# ports, so it never meets the test cluster), runs build/gpu-scheduler-bench on it with the
# apiserver's PID for its CPU figures, and takes it down. Arguments go to the bench (see
# bench/bench.c); with "webhook" first, the rest go to build/gpu-scheduler-webhook-bench
# (bench/webhook.c) instead. --shape ref needs the GPUPlacementMap CRD: the bench applies
# deploy/crd/gpuplacementmaps.yaml (kubectl, this control plane's kubeconfig) and waits until it is
# Established (--crd FILE for another file).
set -euo pipefail
cd "$(dirname "$0")/.."
export GS_CLUSTER_DIR=${GS_BENCH_DIR:-$PWD/build/bench-cluster}
export GS_APISERVER_PORT=${GS_BENCH_APISERVER_PORT:-18443}
export GS_ETCD_PORT=${GS_BENCH_ETCD_PORT:-32379}
export GS_NODES=0
# 20,000 pods created, bound and deleted twice, with their events, outgrow etcd's default 1 GiB
# ("mvcc: database space exceeded"): the apiserver compacts, but the space is only reused, not freed.
export GS_ETCD_QUOTA=${GS_ETCD_QUOTA:-8589934592}
tests/deps.sh
tests/cluster/prepare.sh
tests/cluster/cluster.sh down >/dev/null 2>&1 || true
tests/cluster/cluster.sh up
trap 'tests/cluster/cluster.sh down >/dev/null 2>&1 || true' EXIT
tool=build/gpu-scheduler-bench
if [ "${1:-}" = webhook ]; then
	tool=build/gpu-scheduler-webhook-bench
	shift
fi
pid=$(cat "$GS_CLUSTER_DIR/pids/kube-apiserver.pid" 2>/dev/null || pgrep -f "kube-apiserver.*--secure-port $GS_APISERVER_PORT" | head -n 1)
# kube-scheduler is the cluster's own (its env names the Kubernetes binaries it runs).
ks=()
[ "$tool" = build/gpu-scheduler-bench ] &&
	ks=(--kube-scheduler "$(sed -n 's/^export GS_K8S_BIN=//p' "$GS_CLUSTER_DIR/env")/kube-scheduler")
"$tool" --kubeconfig "$GS_CLUSTER_DIR/kubeconfig" --apiserver-pid "$pid" "${ks[@]}" "$@"
