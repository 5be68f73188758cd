#!/usr/bin/env bash
# Builds tests/cluster/device-plugin/main.go (the test cluster's device plugin) with Debian's go 1.19
# inside the Kubernetes source tree that tests/cluster/build-k8s.sh unpacked, against its vendored
# deviceplugin v1beta1 API and grpc, and caches it beside the Kubernetes binaries, keyed by the
# Kubernetes version and the source's checksum. Prints the binary's path.
#
#   tests/cluster/build-device-plugin.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K8S_VERSION=${K8S_VERSION:-1.20.2}
CACHE=${GS_K8S_CACHE:-/var/cache/gpu-scheduler}
SRC="$ROOT/tests/cluster/device-plugin/main.go"
SUM=$(sha256sum "$SRC" | cut -c1-12)
OUT="$CACHE/k8s-$K8S_VERSION/bin/gs-device-plugin-$SUM"
if [ -x "$OUT" ]; then
	echo "$OUT"
	exit 0
fi
"$ROOT/tests/cluster/build-k8s.sh" >/dev/null # the source tree (and the binaries, once)
TREE=$(find "$CACHE/k8s-$K8S_VERSION/src" -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
[ -n "$TREE" ] || { echo "build-device-plugin: no Kubernetes source tree under $CACHE/k8s-$K8S_VERSION/src" >&2; exit 1; }
PKG="$TREE/cmd/gs-device-plugin"
mkdir -p "$PKG"
cp "$SRC" "$PKG/main.go"
echo "build-device-plugin: building (go 1.19, vendored grpc and deviceplugin v1beta1)" >&2
# GOPATH mode, as Kubernetes 1.20's own build (hack/lib/golang.sh): the tree is linked into $TREE/.go by
# build-k8s.sh and its vendor/ directory resolves the imports.
(
	cd "$TREE/.go/src/k8s.io/kubernetes"
	PATH=/usr/lib/go-1.19/bin:$PATH CGO_ENABLED=0 GO111MODULE=off HOME="$TREE/.home" GOPATH="$TREE/.go" \
		nice go build -o "$OUT.tmp" ./cmd/gs-device-plugin
)
mv "$OUT.tmp" "$OUT"
echo "$OUT"
