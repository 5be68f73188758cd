#!/usr/bin/env bash
# --webhook-self-signed against the real apiserver: the daemon makes a CA and a serving certificate,
# keeps them in a Secret, puts the CA in the MutatingWebhookConfiguration's caBundle, and the apiserver
# then calls it and trusts it. A restart reuses the Secret; a pair close to expiry is renewed, with
# both CAs in the bundle. A Secret shipped as the manifests ship it (Opaque, no data) is filled in place,
# its type, labels and annotations kept, and applying it again server-side neither conflicts nor wipes
# the pair. (The Service name is "localhost" here so that the certificate's DNS names
# match the webhook URL the test apiserver calls: https://localhost:PORT/mutate.)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

work=$(test_workdir)
WPORT=$(free_port)
secret=wh-tls
webhook_register "https://localhost:$WPORT/mutate"
cfg=$WEBHOOK_CONFIG
ARGS=(--webhook-self-signed --namespace "$NS" --webhook-secret "$secret" --webhook-service localhost
	--webhook-config-name "$cfg" --webhook-addr "127.0.0.1:$WPORT")

secret_cert() { kc get secret "$secret" -o jsonpath='{.data.tls\.crt}' 2>/dev/null | base64 -d 2>/dev/null; }
secret_serial() { secret_cert | openssl x509 -noout -serial 2>/dev/null; }
bundle() { NS= kc get mutatingwebhookconfiguration "$cfg" -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | base64 -d; }
served_serial() { openssl s_client -connect "127.0.0.1:$WPORT" -servername localhost </dev/null 2>/dev/null | openssl x509 -noout -serial; }
envs() { kc get pod "$1" -o jsonpath='{.spec.containers[0].env[?(@.name=="CUDA_VISIBLE_DEVICES")].value}'; }

DAEMON_WEBHOOK=1 daemon_start "${ARGS[@]}" || exit 1
check_eventually "the Secret was created with a certificate" 20 eval '[ -n "$(secret_serial)" ]'
check "it is a kubernetes.io/tls Secret with ca.crt" \
	eval '[ "$(kc get secret $secret -o jsonpath={.type})" = kubernetes.io/tls ] && [ -n "$(kc get secret $secret -o jsonpath={.data.ca\\.crt})" ]'
check "the certificate names the Service" eval 'secret_cert | openssl x509 -noout -text | grep -q "DNS:localhost.$NS.svc"'
check_eventually "the caBundle holds the CA" 20 eval 'bundle | grep -q "BEGIN CERTIFICATE"'
check_eventually "the webhook serves the Secret's certificate" 20 eval '[ "$(served_serial)" = "$(secret_serial)" ]'
check "the bundle verifies it" eval 'secret_cert >"$work/leaf.pem"; bundle >"$work/bundle.pem"; openssl verify -CAfile "$work/bundle.pem" "$work/leaf.pem" >/dev/null'
kc apply -f - >/dev/null <<<"$(pod_yaml ss-1 '0=node1:0' '1=node2:1,3')"
check "the apiserver called it and trusted it: the pod got its variable" test "$(envs ss-1)" = "1,3"
check_eventually "and it was bound" 20 pod_on ss-1 node2
na=$(metric gpu_scheduler_webhook_cert_not_after_seconds)
check "certificate expiry exported (about a year ahead)" awk -v t="$na" -v now="$(date +%s)" 'BEGIN { exit !(t > now + 300*86400) }'

# --- restart: the same pair ---------------------------------------------------------------------------
first=$(secret_serial)
daemon_stop TERM 15
DAEMON_WEBHOOK=1 daemon_start "${ARGS[@]}" || exit 1
check_eventually "after a restart the same certificate is served" 20 eval '[ "$(served_serial)" = "$first" ]'
check "and the Secret was not rewritten" test "$(secret_serial)" = "$first"

# --- renewal of a pair close to expiry ------------------------------------------------------------------
daemon_stop TERM 15
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3 -subj /CN=old-ca \
	-keyout "$work/old-ca.key" -out "$work/old-ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
	-keyout "$work/old.key" -out "$work/old.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost\n' >"$work/ext"
openssl x509 -req -in "$work/old.csr" -CA "$work/old-ca.crt" -CAkey "$work/old-ca.key" -CAcreateserial -days 2 \
	-extfile "$work/ext" -out "$work/old.crt" 2>/dev/null
kc create secret tls "$secret" --cert "$work/old.crt" --key "$work/old.key" --dry-run=client -o json |
	jq --arg ca "$(base64 -w0 "$work/old-ca.crt")" '.data["ca.crt"] = $ca' | kc replace -f - >/dev/null
old=$(secret_serial)
DAEMON_WEBHOOK=1 daemon_start "${ARGS[@]}" || exit 1
check_eventually "a pair expiring in 2 days is renewed in the Secret" 20 eval '[ -n "$(secret_serial)" ] && [ "$(secret_serial)" != "$old" ]'
check_eventually "the renewed certificate is served" 20 eval '[ "$(served_serial)" = "$(secret_serial)" ]'
check "the bundle trusts the new CA and still the old one" eval '[ "$(bundle | grep -c "BEGIN CERTIFICATE")" = 2 ] && bundle | openssl x509 -noout -subject | grep -q .'
kc apply -f - >/dev/null <<<"$(pod_yaml ss-0 '0=node1:0,2')"
check "pods are still mutated after the renewal" test "$(envs ss-0)" = "0,2"

# --- a Secret shipped by an installer: filled in place, and applied again without harm ----------------------
# As the chart and deploy/self-signed ship it: Opaque, no data, the installer's labels and annotations.
# Applied by another field manager server-side (helm upgrade's way) before and after the daemon fills it.
daemon_stop TERM 15
kc delete secret "$secret" >/dev/null
shipped() {
	kc apply --server-side --field-manager=installer -f - <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: $secret
  labels: {app.kubernetes.io/managed-by: Helm, team: a}
  annotations: {meta.helm.sh/release-name: gs}
type: Opaque
YAML
}
check "the installer ships the Secret (Opaque, no data)" shipped
DAEMON_WEBHOOK=1 daemon_start "${ARGS[@]}" || exit 1
check_eventually "the daemon fills it with a pair" 20 eval '[ -n "$(secret_serial)" ]'
check "its type, labels and annotations are still the installer's" eval \
	'kc get secret "$secret" -o json | jq -e ".type == \"Opaque\" and .metadata.labels.team == \"a\" and
		.metadata.labels[\"app.kubernetes.io/managed-by\"] == \"Helm\" and .metadata.annotations[\"meta.helm.sh/release-name\"] == \"gs\"" >/dev/null'
check_eventually "the webhook serves it" 20 eval '[ "$(served_serial)" = "$(secret_serial)" ]'
filled=$(secret_serial)
check "the installer applies it again server-side: no conflict" shipped
check "the pair stays" test "$(secret_serial)" = "$filled"
daemon_stop TERM 15 && pass "SIGTERM: exit 0"
test_end
