#!/usr/bin/env bash
# Argo CD's Application and ApplicationSet CRDs, from its Go module (ARGOCD_VERSION, its hash checked
# against ARGOCD_MODULE_H1 in versions.sh), cached outside the repository keyed by version: prints the
# directory that holds application-crd.yaml and applicationset-crd.yaml. Argo CD itself does not run
# here; tests/integration/test_helm_chart.sh installs these CRDs into the test apiserver and has it
# validate deploy/argocd/ (a server-side dry run).
#
#   tests/cluster/build-argocd-crds.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.sh
. "$here/versions.sh"
# shellcheck source=goenv.sh
. "$here/goenv.sh"
OUT=$GS_CACHE/argocd-crds-$ARGOCD_VERSION
if [ -f "$OUT/application-crd.yaml" ] && [ -f "$OUT/applicationset-crd.yaml" ]; then
	echo "$OUT"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# No checksum database is reachable: the hash is checked against the pinned one below instead.
(cd "$tmp" && GOSUMDB=off go mod download -json "github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION" >"$tmp/dl.json") || {
	cat "$tmp/dl.json" >&2
	exit 1
}
sum=$(sed -n 's/^\t"Sum": "\(.*\)",$/\1/p' "$tmp/dl.json")
dir=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' "$tmp/dl.json")
[ "$sum" = "$ARGOCD_MODULE_H1" ] ||
	{ echo "build-argocd-crds: argo-cd $ARGOCD_VERSION has hash $sum, not the pinned $ARGOCD_MODULE_H1" >&2; exit 1; }
mkdir -p "$OUT.tmp"
cp "$dir/manifests/crds/application-crd.yaml" "$dir/manifests/crds/applicationset-crd.yaml" "$OUT.tmp/"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
echo "$OUT"
