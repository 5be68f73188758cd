#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy and caches them
# outside the repository, keyed by version, with pause.c (the nodes' sandbox image) beside them:
#   - 1.34 and later from the Go module k8s.io/kubernetes through tests/cluster/go.mod (or
#     go.VERSION.mod), which tests/cluster/gomod.sh generates from the served go.mod; Go 1.26 from
#     /usr/local/go, the module and build caches in the cache root (goenv.sh). About 6 minutes cold on
#     2 cores, with the modules downloaded in the first 20 s.
#   - 1.20.2 from Debian's `kubernetes` source package with Debian's Go 1.19 (about 11 minutes): its
#     vendored modern-go/reflect2 1.0.1 crashes the apiserver under Go >= 1.18 as soon as a mutating
#     webhook returns a patch, so it is replaced with Debian's 1.0.2 before building.
#
#   tests/cluster/build-k8s.sh            # prints the directory holding the binaries
#
# Environment:
#   GS_K8S_CACHE   cache root (default /var/cache/gpu-scheduler)
#   K8S_VERSION    the version (default and the module ones: versions.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=versions.sh
. "$here/versions.sh"
CACHE=${GS_K8S_CACHE:-/var/cache/gpu-scheduler}
OUT="$CACHE/k8s-$K8S_VERSION/bin"
WANT="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy"

have_all() {
	local b
	for b in $WANT; do [ -x "$OUT/$b" ] || return 1; done
}

if have_all; then
	echo "$OUT"
	exit 0
fi

log() { printf 'build-k8s: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# build_module: the five commands from k8s.io/kubernetes $K8S_VERSION, as Kubernetes' own build makes
# them for Linux (tags selinux,notest; CGO_ENABLED=0), the version stamped so that nodes and
# `kubectl version` say it (else they say v0.0.0-master).
build_module() {
	local v=$K8S_VERSION mod minor ld b pkgs=()
	# shellcheck source=goenv.sh
	. "$here/goenv.sh"
	mod=$(k8s_modfile "$v")
	[ -s "$mod" ] || die "no module file for Kubernetes $v ($mod): run tests/cluster/gomod.sh $v"
	# The committed replaces must be those the served go.mod implies (gomod.sh regenerates them).
	if ! diff <("$here/gomod.sh" "$v" --print | sed -n '/^replace (/,/^)/p') <(sed -n '/^replace (/,/^)/p' "$mod") >&2; then
		die "$mod's replaces differ from the served go.mod of k8s.io/kubernetes v$v: run tests/cluster/gomod.sh $v"
	fi
	minor=${v#1.}
	minor=${minor%%.*}
	ld="-s -w"
	for b in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld+=" -X $b.gitVersion=v$v -X $b.gitMajor=1 -X $b.gitMinor=$minor -X $b.gitTreeState=clean"
	done
	for b in $WANT; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
	log "building $WANT $v from its Go module (about 6 minutes on 2 cores, cold)"
	rm -rf "$OUT.tmp"
	mkdir -p "$OUT.tmp"
	(cd "$here" && CGO_ENABLED=0 nice go build -modfile="$mod" -tags selinux,notest -trimpath -ldflags "$ld" \
		-o "$OUT.tmp/" "${pkgs[@]}")
	install -m 0644 "$GOMODCACHE/k8s.io/kubernetes@v$v/build/pause/linux/pause.c" "$OUT.tmp/../pause.c"
	rm -rf "$OUT"
	mv "$OUT.tmp" "$OUT"
}

case $K8S_VERSION in
1.20.*) ;;
*)
	build_module
	echo "$OUT"
	exit 0
	;;
esac

need_pkgs=()
[ -x /usr/lib/go-1.19/bin/go ] || need_pkgs+=(golang-1.19-go)
command -v rsync >/dev/null || need_pkgs+=(rsync)
command -v dpkg-source >/dev/null || need_pkgs+=(dpkg-dev)
[ -d /usr/share/gocode/src/github.com/modern-go/reflect2 ] || need_pkgs+=(golang-github-modern-go-reflect2-dev)
# What a 1.20 cluster runs beside it: Debian's etcd 3.4 and containerd 1.6 (cluster.sh, nodes.sh).
command -v etcd >/dev/null || need_pkgs+=(etcd-server)
command -v containerd >/dev/null || need_pkgs+=(containerd)
if [ ${#need_pkgs[@]} -gt 0 ]; then
	log "installing ${need_pkgs[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >&2
fi

SRC_LIST=/etc/apt/sources.list.d/gpu-scheduler-src.sources
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
	log "adding a deb-src entry for bookworm"
	cat > "$SRC_LIST" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	apt-get update -qq >&2
fi

WORK="$CACHE/k8s-$K8S_VERSION/src"
mkdir -p "$WORK"
cd "$WORK"
if ! ls kubernetes_*.dsc >/dev/null 2>&1; then
	log "fetching the kubernetes source package"
	apt-get source --download-only kubernetes >&2
fi
TREE=$(find "$WORK" -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
if [ -z "$TREE" ]; then
	dpkg-source --no-check -x kubernetes_*.dsc >&2
	TREE=$(find "$WORK" -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
fi

R2="$TREE/vendor/github.com/modern-go/reflect2"
if ! grep -qs 'gpu-scheduler: reflect2 1.0.2' "$R2/.patched"; then
	log "replacing vendored reflect2 with Debian's 1.0.2"
	rm -f "$R2"/*.go "$R2"/*.s
	cp /usr/share/gocode/src/github.com/modern-go/reflect2/*.go "$R2/"
	cp /usr/share/gocode/src/github.com/modern-go/reflect2/*.s "$R2/" 2>/dev/null || true
	rm -f "$R2"/*_test.go
	echo 'gpu-scheduler: reflect2 1.0.2' > "$R2/.patched"
	rm -rf "$TREE/_output"
fi

mkdir -p "$TREE/.go/src/k8s.io" "$TREE/.home"
ln -sfn "$TREE" "$TREE/.go/src/k8s.io/kubernetes"
# A generator binary left empty by an earlier failed build breaks every later one.
find "$TREE/_output" -type f -size 0 -path '*bin*' -delete 2>/dev/null || true

log "building $WANT (about 11 minutes on 2 cores)"
(
	cd "$TREE/.go/src/k8s.io/kubernetes"
	PATH=/usr/lib/go-1.19/bin:$PATH CGO_ENABLED=0 HOME="$TREE/.home" GOPATH="$TREE/.go" \
		GOFLAGS=-mod=vendor make WHAT="$(printf 'cmd/%s ' $WANT)" >&2
)
mkdir -p "$OUT"
for b in $WANT; do
	install -m 0755 "$TREE/_output/bin/$b" "$OUT/$b"
done
# Keep the cache small: the binaries are all we need again, plus pause.c for the node image.
install -m 0644 "$TREE/build/pause/linux/pause.c" "$OUT/../pause.c" 2>/dev/null || true
echo "$OUT"
