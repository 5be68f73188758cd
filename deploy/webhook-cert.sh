#!/usr/bin/env bash
# Gives the webhook a serving certificate without cert-manager: makes a private CA and a certificate for
# gpu-scheduler.kube-system.svc with openssl, stores them in the Secret the Deployment mounts
# (gpu-scheduler-webhook-tls), and writes the CA into the MutatingWebhookConfiguration's caBundle.
#
#   deploy/webhook-cert.sh [DIR]      DIR keeps ca.crt/ca.key/tls.crt/tls.key (default: a temporary
#                                      directory, removed afterwards; the CA key is then thrown away)
#
# Run it after `kubectl apply -k deploy/` (the webhook configuration must exist) and again before the
# certificate expires (DAYS, default 365); the daemon reloads the new files without a restart. Uses
# the current kubectl context (or KUBECONFIG), or the command in $KUBECTL.
set -euo pipefail

KUBECTL=${KUBECTL:-kubectl}   # e.g. KUBECTL="kubectl --context kind-gpu-scheduler"

NS=kube-system
SVC=gpu-scheduler
SECRET=gpu-scheduler-webhook-tls
WEBHOOK=gpu-scheduler
DAYS=${DAYS:-365}

if [ $# -ge 1 ]; then
	dir=$1
	mkdir -p "$dir"
else
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi
umask 077

if [ ! -s "$dir/ca.key" ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
		-subj "/CN=gpu-scheduler webhook CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
fi
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$SVC.$NS.svc" \
	-keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
cat > "$dir/ext.cnf" <<CNF
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:$SVC.$NS.svc, DNS:$SVC.$NS.svc.cluster.local, DNS:$SVC.$NS, DNS:$SVC
CNF
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
	-days "$DAYS" -extfile "$dir/ext.cnf" -out "$dir/tls.crt" 2>/dev/null

$KUBECTL -n "$NS" create secret tls "$SECRET" --cert="$dir/tls.crt" --key="$dir/tls.key" \
	--dry-run=client -o yaml | $KUBECTL apply -f -
ca=$(base64 -w0 < "$dir/ca.crt")
$KUBECTL patch mutatingwebhookconfiguration "$WEBHOOK" --type=json \
	-p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$ca\"}]"
echo "webhook-cert: $SECRET and the caBundle of $WEBHOOK updated (valid $DAYS days)" >&2
