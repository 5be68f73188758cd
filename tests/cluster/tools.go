//go:build tools

// The Kubernetes commands tests/cluster/build-k8s.sh builds from this module, imported so that
// `go mod tidy` (tests/cluster/gomod.sh) pins everything they need.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
