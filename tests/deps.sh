#!/usr/bin/env bash
# Installs with apt-get what building, testing and the demo need on Debian bookworm (as root). Only
# Debian's mirror is used. Skipped when GS_NO_APT=1 (or GS_CI_NO_APT=1), or when all are installed.
set -euo pipefail
pkgs=(
	build-essential clang clang-format make pkg-config git ca-certificates
	# clang's sanitizer and libFuzzer runtimes (make check, make fuzz): only recommended by clang-14's
	# packages, so --no-install-recommends would leave them out.
	libclang-rt-14-dev
	libuv1-dev libmbedtls-dev node-llhttp libyaml-dev libcjson-dev libnghttp2-dev libcmocka-dev valgrind
	prometheus openssl curl jq procps iproute2 python3 python3-yaml
	# Real nodes (GS_NODE_MODE=kubelet) and the images: runc under each node's containerd (which, with
	# Kubernetes and etcd, tests/cluster/prepare.sh builds from Go modules with the Go at /usr/local/go),
	# CNI bridge, kube-proxy's tools, buildah on a debootstrap base.
	runc containernetworking-plugins iptables ipset conntrack buildah debootstrap
	# bench/: the bound-pods-over-time plot.
	gnuplot-nox
)
# Debian ships kubectl as kubernetes-client (1.20). A kubectl already on PATH (e.g. Google's `kubectl`
# package, which owns the same file) is kept; the tests use kubectl 1.35 (tests/cluster/build-clients.sh,
# from npm, hence npm where the machine has none).
command -v kubectl >/dev/null || pkgs+=(kubernetes-client)
command -v npm >/dev/null || pkgs+=(npm)

[ "${GS_NO_APT:-${GS_CI_NO_APT:-0}}" = 1 ] && exit 0
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
[ "$(id -u)" = 0 ] || { echo "deps: need root to apt-get install ${missing[*]} (or set GS_NO_APT=1)" >&2; exit 2; }
echo "deps: apt-get install ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
