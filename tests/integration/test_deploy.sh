#!/usr/bin/env bash
# deploy/: the kustomize base and both certificate Components render, and the apiserver accepts them
# (server-side dry run: schemas, RBAC objects, webhook configuration), and so does the example.
. "$(dirname "$0")/../lib.sh"
test_begin
ov=$GS_BUILD_DIR/test-overlays
rm -rf "$ov"
# On a 1.20 apiserver the dry runs add deploy/k8s-1.20 (PodDisruptionBudget policy/v1beta1, which a
# newer apiserver no longer serves).
server=$(server_minor)
old=
[ "${server:-0}" -lt 21 ] && old=-1.20
for c in self-signed cert-manager; do
	mkdir -p "$ov/$c" "$ov/$c-1.20"
	printf 'resources: [../../../deploy]\ncomponents: [../../../deploy/%s]\n' "$c" >"$ov/$c/kustomization.yaml"
	printf 'resources: [../../../deploy]\ncomponents: [../../../deploy/%s, ../../../deploy/k8s-1.20]\n' "$c" \
		>"$ov/$c-1.20/kustomization.yaml"
done
mkdir -p "$ov/base-1.20" "$ov/no-agent"
printf 'resources: [../../../deploy]\ncomponents: [../../../deploy/k8s-1.20]\n' >"$ov/base-1.20/kustomization.yaml"
printf 'resources: [../../../deploy]\ncomponents: [../../../deploy/self-signed, ../../../deploy/no-agent]\n' \
	>"$ov/no-agent/kustomization.yaml"
# kubectl embeds kustomize v4 (labels:, Components) from 1.21; Debian's kubernetes-client is 1.20.
minor=$(kc version --client -o json 2>/dev/null | grep -o '"minor": *"[0-9]*' | grep -o '[0-9]*$')
if [ "${minor:-0}" -lt 21 ]; then
	echo "  kubectl 1.${minor:-?} embeds kustomize v2: the kustomize checks are skipped (not counted)"
	check "the example StatefulSet is accepted (dry run)" \
		eval 'kc apply --dry-run=server -f "$GS_ROOT/deploy/examples/gpu-scheduler-check.yaml" >/dev/null'
	test_end
fi
check "the base renders" eval 'NS= kc kustomize "$GS_ROOT/deploy" >"$ov/base.yaml"'
check "the base runs 2 replicas with a PodDisruptionBudget (policy/v1) and the Lease RBAC" eval \
	'grep -q "replicas: 2" "$ov/base.yaml" && grep -B1 -q "kind: PodDisruptionBudget" "$ov/base.yaml" &&
	 grep -q "apiVersion: policy/v1$" "$ov/base.yaml" && grep -q "coordination.k8s.io" "$ov/base.yaml"'
check "the base runs the node agent DaemonSet with its own ServiceAccount and ClusterRole" eval \
	'grep -q "kind: DaemonSet" "$ov/base.yaml" && grep -q "serviceAccountName: gpu-scheduler-agent" "$ov/base.yaml" &&
	 [ "$(grep -c "name: gpu-scheduler-agent$" "$ov/base.yaml")" -ge 4 ]'
check "with deploy/no-agent nothing of the agent is left" eval \
	'NS= kc kustomize "$ov/no-agent" >"$ov/no-agent.yaml" && ! grep -q "gpu-scheduler-agent" "$ov/no-agent.yaml" &&
	 grep -q "kind: Deployment" "$ov/no-agent.yaml"'
check "with deploy/k8s-1.20 it renders, the PodDisruptionBudget as policy/v1beta1 only" eval \
	'NS= kc kustomize "$ov/base-1.20" >"$ov/base-1.20.yaml" && grep -q "apiVersion: policy/v1beta1" "$ov/base-1.20.yaml" &&
	 ! grep -q "apiVersion: policy/v1$" "$ov/base-1.20.yaml"'
check "the apiserver (1.$server) accepts the base$old (dry run)" eval 'NS= kc apply --dry-run=server -f "$ov/base$old.yaml" >/dev/null'
check "the self-signed overlay renders" eval 'NS= kc kustomize "$ov/self-signed" >"$ov/self-signed.yaml"'
check "it runs --webhook-self-signed without a certificate volume" \
	eval 'grep -q -- "--webhook-self-signed" "$ov/self-signed.yaml" && ! grep -q "mountPath: /etc/gpu-scheduler/tls" "$ov/self-signed.yaml"'
check "the apiserver (1.$server) accepts it$old (dry run)" eval \
	'NS= kc kustomize "$ov/self-signed$old" >"$ov/self-signed$old.yaml" && NS= kc apply --dry-run=server -f "$ov/self-signed$old.yaml" >/dev/null'
check "deploy/install.yaml is that overlay rendered (make manifests)" \
	eval 'grep -v "^#" "$GS_ROOT/deploy/install.yaml" | diff - "$ov/self-signed.yaml"'
check "the cert-manager overlay renders" eval 'NS= kc kustomize "$ov/cert-manager" >"$ov/cert-manager.yaml"'
check "the example StatefulSet is accepted (dry run)" \
	eval 'kc apply --dry-run=server -f "$GS_ROOT/deploy/examples/gpu-scheduler-check.yaml" >/dev/null'
test_end
