#!/usr/bin/env bash
# Builds tests/cluster/device-plugin/main.go (the test cluster's device plugin) and caches it beside the
# Kubernetes binaries, keyed by the Kubernetes version and the source's checksum (with the module's
# go.sum). Prints the binary's path.
#   - 1.34 and later: from the module tests/cluster/go.mod (or go.VERSION.mod), against the deviceplugin
#     v1beta1 API and grpc that k8s.io/kubernetes VERSION pins (Go 1.26, goenv.sh).
#   - 1.20.2: with Debian's go 1.19 inside the Kubernetes source tree that tests/cluster/build-k8s.sh
#     unpacked, against its vendored deviceplugin v1beta1 API and grpc.
#
#   tests/cluster/build-device-plugin.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
here=$ROOT/tests/cluster
# shellcheck source=versions.sh
. "$here/versions.sh"
CACHE=${GS_K8S_CACHE:-/var/cache/gpu-scheduler}
SRC=("$ROOT"/tests/cluster/device-plugin/*.go)
case $K8S_VERSION in
1.20.*) MOD= ;;
*)
	MOD=$(k8s_modfile "$K8S_VERSION")
	;;
esac
SUM=$(cat "${SRC[@]}" ${MOD:+"${MOD%.mod}.sum"} | sha256sum | cut -c1-12)
OUT="$CACHE/k8s-$K8S_VERSION/bin/gs-device-plugin-$SUM"
if [ -x "$OUT" ]; then
	echo "$OUT"
	exit 0
fi
if [ -n "$MOD" ]; then
	# shellcheck source=goenv.sh
	. "$here/goenv.sh"
	echo "build-device-plugin: building (Go module $MOD)" >&2
	mkdir -p "$(dirname "$OUT")"
	(cd "$here" && CGO_ENABLED=0 nice go build -modfile="$MOD" -trimpath -o "$OUT.tmp" ./device-plugin)
	mv "$OUT.tmp" "$OUT"
	echo "$OUT"
	exit 0
fi
"$ROOT/tests/cluster/build-k8s.sh" >/dev/null # the source tree (and the binaries, once)
TREE=$(find "$CACHE/k8s-$K8S_VERSION/src" -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
[ -n "$TREE" ] || { echo "build-device-plugin: no Kubernetes source tree under $CACHE/k8s-$K8S_VERSION/src" >&2; exit 1; }
PKG="$TREE/cmd/gs-device-plugin"
mkdir -p "$PKG"
rm -f "$PKG"/*.go
cp "${SRC[@]}" "$PKG/"
echo "build-device-plugin: building (go 1.19, vendored grpc and deviceplugin v1beta1)" >&2
# GOPATH mode, as Kubernetes 1.20's own build (hack/lib/golang.sh): the tree is linked into $TREE/.go by
# build-k8s.sh and its vendor/ directory resolves the imports.
(
	cd "$TREE/.go/src/k8s.io/kubernetes"
	PATH=/usr/lib/go-1.19/bin:$PATH CGO_ENABLED=0 GO111MODULE=off HOME="$TREE/.home" GOPATH="$TREE/.go" \
		nice go build -tags k8s120 -o "$OUT.tmp" ./cmd/gs-device-plugin
)
mv "$OUT.tmp" "$OUT"
echo "$OUT"
