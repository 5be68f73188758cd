#!/usr/bin/env bash
# Builds (or finds cached in /var/cache/gpu-scheduler) everything the test clusters of Kubernetes
# K8S_VERSION run: Kubernetes itself (build-k8s.sh), and for 1.34 and later etcd and containerd
# (build-deps.sh), kubectl 1.35 and helm (build-clients.sh) and the device plugin. Quiet when all is
# cached; `make prepare`, `make demo` and the bench run it.
#
#   tests/cluster/prepare.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.sh
. "$here/versions.sh"
"$here/build-k8s.sh" >/dev/null
case $K8S_VERSION in
1.20.*) ;;
*)
	"$here/build-deps.sh" etcd >/dev/null
	"$here/build-deps.sh" containerd >/dev/null
	"$here/build-clients.sh" >/dev/null
	;;
esac
"$here/build-device-plugin.sh" >/dev/null
