#!/usr/bin/env bash
# The Helm chart (charts/gpu-scheduler) with the real helm (v4, tests/cluster/build-clients.sh):
#   - helm lint --strict passes; the values schema refuses an unknown key, a bad enum, a bad number
#   - the `helm test` pod: its map, and its check, run here with the environment it would see (passes
#     bound where mapped with the mapped CUDA_VISIBLE_DEVICES; fails on another node, other GPUs, none)
#   - one source of truth: `helm template` and `kubectl kustomize` of the matching deploy/ overlay give
#     the same objects (tests/helm/compare.py: Helm's labels aside) for the default values (the
#     self-signed certificate), certificate=secret (deploy/ itself), cert-manager, the agent off, and the
#     monitoring objects on; the chart's copies of the CRD, the dashboard and the rules are deploy/'s
#   - a release of another name in another namespace names everything after itself: the Lease, the
#     Secret, the webhook configuration the scheduler updates, the agent's policy username
#   - against the real apiserver: helm install creates the objects (the CRD kept if present), helm
#     uninstall leaves no webhook configuration, no ClusterRole, no policy behind, and the CRD stays
#   - deploy/argocd/: the Application and the ApplicationSet pass Argo CD's own CRDs (from its Go module,
#     tests/cluster/build-argocd-crds.sh) in a server-side dry run; a misspelled field is refused
# (Install, upgrade, test and rollback on kubelets: tests/e2e.)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

work=$(test_workdir)
CHART=$GS_ROOT/charts/gpu-scheduler
bin=$("$GS_ROOT/tests/cluster/build-clients.sh") || { fail "helm" "tests/cluster/build-clients.sh failed"; test_end; }
HELM=$bin/helm
K=${TEST_ASSET_KUBECTL:-$bin/kubectl}
check "helm is v4.1.4" eval '"$HELM" version --short | grep -q "^v4\.1\.4"'
check "helm lint --strict" "$HELM" lint --strict "$CHART"

# ---- the schema ---------------------------------------------------------------------------------------
refused() { # refused WANT ARGS...: helm template fails, saying WANT
	local out
	out=$("$HELM" template x "$CHART" "${@:2}" 2>&1) && { echo "rendered"; return 1; }
	grep -q -- "$1" <<<"$out" || { echo "$out" | head -5; return 1; }
}
check "schema: an unknown key is refused" refused "additional properties 'certificat' not allowed" --set webhook.certificat=x
check "schema: a certificate source not offered is refused" refused "/webhook/certificate" --set webhook.certificate=acme
check "schema: replicaCount 0 is refused" refused "minimum: got 0, want 1" --set replicaCount=0
check "certificate=secret without caBundle: refused, saying what is missing" refused "needs webhook.caBundle" \
	--set webhook.certificate=secret

# ---- the helm test pod ------------------------------------------------------------------------------------
"$HELM" template gpu-scheduler "$CHART" --set tests.node=n1 --set 'tests.gpus=1\,2' \
	--show-only templates/tests/mapped-pod.yaml >"$work/testpod.yaml" 2>&1
check "helm test's pod maps 0=n1:1,2, in namespace default" eval \
	'grep -q "gpu-scheduling-map: \"0=n1:1,2\"" "$work/testpod.yaml" && grep -q "namespace: default" "$work/testpod.yaml"'
# tpod NODE [CUDA_VISIBLE_DEVICES]: the rendered pod's command, in its rendered environment.
tpod() {
	python3 - "$work/testpod.yaml" "$@" <<'PY'
import os, subprocess, sys, yaml
pod = yaml.safe_load(open(sys.argv[1]))
c = pod["spec"]["containers"][0]
env = {e["name"]: e["value"] for e in c["env"] if "value" in e}
env["NODE_NAME"] = sys.argv[2]
if len(sys.argv) > 3:
    env["CUDA_VISIBLE_DEVICES"] = sys.argv[3]
sys.exit(subprocess.run(c["command"], env=env).returncode)
PY
}
check "its check passes on n1 with CUDA_VISIBLE_DEVICES=1,2" tpod n1 1,2
check "it fails on another node" eval '! tpod n2 1,2'
check "it fails with other GPUs" eval '! tpod n1 1'
check "it fails when the webhook set nothing" eval '! tpod n1'
check "helm template (no cluster to look nodes up) with no tests.node: no test pod" eval \
	'! "$HELM" template x "$CHART" | grep -q "helm.sh/hook: test"'

# ---- the same objects as deploy/ ----------------------------------------------------------------------
for f in crds/gpuplacementmaps.yaml:deploy/crd/gpuplacementmaps.yaml files/dashboard.json:deploy/monitoring/dashboard.json \
	files/prometheusrule.yaml:deploy/monitoring/prometheusrule.yaml; do
	check "the chart's ${f%%:*} is ${f#*:}" cmp "$CHART/${f%%:*}" "$GS_ROOT/${f#*:}"
done
# rel DIR PATH...: the PATHs relative to DIR, comma-separated (kustomize takes no absolute path).
rel() {
	local dir=$1 p out=
	shift
	for p in "$@"; do out+="${out:+, }$(realpath --relative-to="$dir" "$p")"; done
	printf '%s' "$out"
}
# same NAME "COMPONENTS" "RESOURCES" HELM-ARGS...: an overlay of deploy/ and the chart, rendered and
# compared (COMPONENTS and RESOURCES: directories, blank-separated).
same() {
	local dir=$work/overlay-$1
	mkdir -p "$dir"
	# shellcheck disable=SC2086 # word splitting of the lists is meant
	printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [%s]\ncomponents: [%s]\n' \
		"$(rel "$dir" $3)" "$(rel "$dir" $2)" >"$dir/kustomization.yaml"
	"$K" kustomize "$dir" >"$dir/deploy.yaml" || return 1
	"$HELM" template gpu-scheduler "$CHART" -n kube-system --include-crds --set image.tag=latest "${@:4}" \
		>"$dir/chart.yaml" || return 1
	python3 "$GS_ROOT/tests/helm/compare.py" "$dir/chart.yaml" "$dir/deploy.yaml"
}
D=$GS_ROOT/deploy
check "defaults (self-signed) = deploy/ + self-signed" same ss "$D/self-signed" "$D"
check "certificate=secret = deploy/" same secret "" "$D" --set webhook.certificate=secret,webhook.caBundle=Q0E=
check "certificate=cert-manager = deploy/ + cert-manager" same cm "$D/cert-manager" "$D" --set webhook.certificate=cert-manager
check "agent.enabled=false = deploy/ + self-signed + no-agent" same noagent "$D/self-signed $D/no-agent" "$D" \
	--set agent.enabled=false
check "monitoring on = deploy/ + deploy/monitoring + self-signed" same mon "$D/self-signed" "$D $D/monitoring" \
	--set monitoring.serviceMonitor.enabled=true,monitoring.prometheusRule.enabled=true,monitoring.dashboard.enabled=true

# ---- another release name and namespace -------------------------------------------------------------------
"$HELM" template team "$CHART" -n gpu-system >"$work/team.yaml"
names() { python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d: print(d["kind"], d["metadata"].get("namespace", "-"), d["metadata"]["name"])' "$work/team.yaml"; }
check "release team: every object named team-gpu-scheduler*" eval '! names | awk "\$3 !~ /^team-gpu-scheduler/" | grep .'
check "release team: namespaced objects in gpu-system" eval '! names | awk "\$2 != \"-\" && \$2 != \"gpu-system\"" | grep .'
check "release team: its own Lease (--leader-elect-resource-name) and Role" eval \
	'grep -q -- "--leader-elect-resource-name=team-gpu-scheduler" "$work/team.yaml" &&
	 grep -q "resourceNames: \[\"team-gpu-scheduler\"\]" "$work/team.yaml"'
check "release team: it makes its Secret and updates its webhook configuration" eval \
	'grep -q -- "--webhook-secret=team-gpu-scheduler-webhook-tls" "$work/team.yaml" &&
	 grep -q -- "--webhook-config-name=team-gpu-scheduler" "$work/team.yaml" &&
	 grep -q -- "--webhook-service=team-gpu-scheduler" "$work/team.yaml"'
check "release team: the agent's policy names its account" \
	grep -q 'request.userInfo.username == "system:serviceaccount:gpu-system:team-gpu-scheduler-agent"' "$work/team.yaml"
check "release team: the webhook leaves gpu-system and kube-system alone" \
	grep -q 'values: \["gpu-system", "kube-system"\]' "$work/team.yaml"

# ---- install and uninstall against the real apiserver ------------------------------------------------------
R=gs-helm
HNS=$NS-helm
hk() { "$HELM" --kubeconfig "$KUBECONFIG" "$@"; }
defer "hk uninstall $R -n $HNS --wait=false >/dev/null 2>&1; NS= kc delete namespace $HNS --wait=false >/dev/null 2>&1"
crd_before=$(NS= kc get crd gpuplacementmaps.gpu-scheduler.io -o name 2>/dev/null || true)
check "helm install" eval 'hk install $R "$CHART" -n $HNS --create-namespace --set image.tag=latest >"$work/install.out" 2>&1 ||
	{ cat "$work/install.out"; false; }'
check "its NOTES say how to check it" grep -q "rollout status deployment/$R-gpu-scheduler" "$work/install.out"
check "installed: the Deployment, the agent DaemonSet" eval \
	'NS=$HNS kc get deployment/$R-gpu-scheduler daemonset/$R-gpu-scheduler-agent >/dev/null'
check "installed: the webhook configuration, the ClusterRole, the agent's policy" eval \
	'NS= kc get mutatingwebhookconfiguration/$R-gpu-scheduler clusterrole/$R-gpu-scheduler validatingadmissionpolicy/$R-gpu-scheduler-agent >/dev/null'
check "the CRD is there" eval 'NS= kc get crd gpuplacementmaps.gpu-scheduler.io >/dev/null'
check "helm list shows it deployed" eval 'hk list -n $HNS -o json | jq -e ".[0].name == \"$R\" and .[0].status == \"deployed\"" >/dev/null'
check "helm uninstall" eval 'hk uninstall $R -n $HNS >/dev/null'
check "uninstalled: no webhook configuration, ClusterRole or policy left" eval \
	'[ -z "$(NS= kc get mutatingwebhookconfiguration,clusterrole,clusterrolebinding,validatingadmissionpolicy,validatingadmissionpolicybinding -o name | grep "/$R-")" ]'
check "uninstalled: nothing of the release left in its namespace" eval \
	'[ -z "$(NS=$HNS kc get deployment,daemonset,service,secret,serviceaccount,role,rolebinding,networkpolicy,poddisruptionbudget -o name 2>/dev/null | grep "$R-")" ]'
check "the CRD stays (Helm never deletes crds/)" eval 'NS= kc get crd gpuplacementmaps.gpu-scheduler.io >/dev/null'
[ -n "$crd_before" ] || NS= kc delete crd gpuplacementmaps.gpu-scheduler.io --wait=false >/dev/null 2>&1

# ---- GitOps: deploy/argocd/ against Argo CD's own CRDs -----------------------------------------------------
if acrds=$("$GS_ROOT/tests/cluster/build-argocd-crds.sh"); then
	defer "NS= kc delete crd applications.argoproj.io applicationsets.argoproj.io --wait=false >/dev/null 2>&1; NS= kc delete namespace argocd --wait=false >/dev/null 2>&1"
	check "Argo CD's CRDs apply (server-side: they are large)" eval \
		'NS= kc apply --server-side --force-conflicts -f "$acrds/application-crd.yaml" -f "$acrds/applicationset-crd.yaml" >/dev/null'
	# Polled (lib.sh), not `kubectl wait`, which errors out on a CRD just created (once seen under make check).
	check_eventually "they are established" 30 eval \
		'crd_established applications.argoproj.io && crd_established applicationsets.argoproj.io'
	NS= kc create namespace argocd >/dev/null 2>&1
	for f in application applicationset; do
		check "deploy/argocd/$f.yaml passes Argo CD's schema (server-side dry run, strict fields)" eval \
			'NS= kc apply --dry-run=server --validate=strict -f "$GS_ROOT/deploy/argocd/$f.yaml" >/dev/null'
	done
	sed 's/^  syncPolicy:/  syncPolicyy:/' "$GS_ROOT/deploy/argocd/application.yaml" >"$work/typo.yaml"
	check "a misspelled field is refused (the check can fail)" eval \
		'out=$(NS= kc apply --dry-run=server --validate=strict -f "$work/typo.yaml" 2>&1); [ $? -ne 0 ] && grep -q "syncPolicyy" <<<"$out"'
else
	fail "Argo CD's CRDs" "tests/cluster/build-argocd-crds.sh failed"
fi
test_end
