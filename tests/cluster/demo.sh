#!/usr/bin/env bash
# The local demo behind `make demo`: a real kube-apiserver + etcd + kube-controller-manager (built from
# Debian's kubernetes source package, cached), nodes node1..node4, gpu-scheduler with its admission
# webhook, and the example StatefulSet from deploy/examples/. It waits until the five pods are bound
# where the map says, then prints `kubectl get pod -owide -A` and what each pod on node3 and node4
# was given.
#
#   tests/cluster/demo.sh up      (make demo)       leaves everything running; KUBECONFIG is printed
#   tests/cluster/demo.sh down    (make demo-down)
#
# The nodes here are API objects without kubelets, so the pods are bound but do not run: the demo
# shows each pod's CUDA_VISIBLE_DEVICES from its spec (what the container will see) instead of its log.
# Running them on real kubelets with the images is issue 4 (tests/cluster/nodes.sh, in progress).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
export GS_CLUSTER_DIR=${GS_DEMO_DIR:-$ROOT/build/demo}
export GS_APISERVER_PORT=${GS_DEMO_APISERVER_PORT:-26443}
export GS_ETCD_PORT=${GS_DEMO_ETCD_PORT:-22379}
WEBHOOK_PORT=${GS_DEMO_WEBHOOK_PORT:-28443}
HEALTH_PORT=${GS_DEMO_HEALTH_PORT:-28080}
NS=gpu-demo

say() { printf '\n=== demo: %s\n' "$*"; }

down() {
	if [ -f "$GS_CLUSTER_DIR/daemon.pid" ]; then
		kill "$(cat "$GS_CLUSTER_DIR/daemon.pid")" 2>/dev/null || true
		rm -f "$GS_CLUSTER_DIR/daemon.pid"
	fi
	tests/cluster/cluster.sh down || true
}

if [ "${1:-up}" = down ]; then
	down
	exit 0
fi

say "dependencies (tests/deps.sh), build, Kubernetes 1.20.2 binaries (cached; ~11 min the first time)"
tests/deps.sh
make -s all
tests/cluster/build-k8s.sh >/dev/null

say "control plane and nodes node1..node4"
tests/cluster/cluster.sh down >/dev/null 2>&1 || true
tests/cluster/cluster.sh up
# shellcheck disable=SC1091
. "$GS_CLUSTER_DIR/env"
kc() { kubectl --kubeconfig "$KUBECONFIG" "$@"; }

say "webhook certificate (a CA and a serving certificate for 127.0.0.1)"
pki=$GS_CLUSTER_DIR/webhook
mkdir -p "$pki"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj /CN=gpu-scheduler-demo-ca \
	-keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
	-keyout "$pki/tls.key" -out "$pki/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$pki/ext"
openssl x509 -req -in "$pki/tls.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 30 \
	-extfile "$pki/ext" -out "$pki/tls.crt" 2>/dev/null

say "gpu-scheduler (log: $GS_CLUSTER_DIR/logs/gpu-scheduler.log)"
build/gpu-scheduler --kubeconfig "$KUBECONFIG" --health-addr "127.0.0.1:$HEALTH_PORT" \
	--webhook-addr "127.0.0.1:$WEBHOOK_PORT" --tls-cert-file "$pki/tls.crt" --tls-private-key-file "$pki/tls.key" \
	</dev/null >"$GS_CLUSTER_DIR/logs/gpu-scheduler.log" 2>&1 &
echo $! >"$GS_CLUSTER_DIR/daemon.pid"
for _ in $(seq 1 60); do
	[ "$(curl -sf "http://127.0.0.1:$HEALTH_PORT/readyz" || true)" = ok ] && break
	sleep 0.5
done
curl -sf "http://127.0.0.1:$HEALTH_PORT/readyz" >/dev/null || { tail "$GS_CLUSTER_DIR/logs/gpu-scheduler.log"; exit 1; }
kc apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: gpu-scheduler
webhooks:
- name: gpu-scheduler.gpu-scheduler.io
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Ignore
  timeoutSeconds: 5
  clientConfig:
    url: https://127.0.0.1:$WEBHOOK_PORT/mutate
    caBundle: $(base64 -w0 "$pki/ca.crt")
  rules:
  - {operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"]}
  namespaceSelector:
    matchExpressions:
    - {key: gpu-scheduler.io/webhook, operator: NotIn, values: ["disabled"]}
YAML

say "the example StatefulSet (deploy/examples/gpu-scheduler-check.yaml) in namespace $NS"
kc create namespace "$NS" >/dev/null
kc -n "$NS" apply -f deploy/examples/gpu-scheduler-check.yaml >/dev/null
bound() { [ "$(kc -n "$NS" get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" = 5 ]; }
for _ in $(seq 1 120); do bound && break; sleep 0.5; done
bound || { echo "demo: pods not bound"; kc -n "$NS" get pods -o wide; exit 1; }

say "kubectl get pod -owide -A"
kc get pod -owide -A
for n in node3 node4; do
	for p in $(kc -n "$NS" get pods --field-selector "spec.nodeName=$n" -o jsonpath='{.items[*].metadata.name}'); do
		say "pod $p on $n"
		kc -n "$NS" get pod "$p" -o jsonpath='node={.spec.nodeName} CUDA_VISIBLE_DEVICES={.spec.containers[0].env[?(@.name=="CUDA_VISIBLE_DEVICES")].value} assigned={.metadata.annotations.gpu-scheduler\.io/assigned}{"\n"}'
	done
done
say "running; KUBECONFIG=$KUBECONFIG; stop with: make demo-down"
