#!/usr/bin/env bash
# A real Kubernetes control plane for the tests and the demo: etcd, kube-apiserver and
# kube-controller-manager, plus GS_NODES nodes node1..nodeN (or GS_NODE_NAMES) that are Ready and
# advertise nvidia.com/gpu.
# The nodes are Node objects without kubelets (GS_NODE_MODE=fake, the default: on loopback, seconds to
# start), or real kubelets, each with its own containerd, with kube-scheduler and kube-proxy
# (GS_NODE_MODE=kubelet: as root; see nodes.sh). See docs/cluster.md.
#
#   tests/cluster/cluster.sh up                 start, wait for /readyz, nodes and service accounts
#   tests/cluster/cluster.sh down               stop exactly the processes `up` started, remove state
#   tests/cluster/cluster.sh restart-apiserver  stop and start kube-apiserver only (same ports, certs)
#   tests/cluster/cluster.sh kill-apiserver     the same, but SIGKILL at once (by its recorded PID): a crash
#   tests/cluster/cluster.sh stop-kubelet N     kubelet mode: stop node N's kubelet only (pods, containerd stay)
#   tests/cluster/cluster.sh start-kubelet N    start it again in the node's namespace, wait until Ready
#   tests/cluster/cluster.sh env                print `export ...` lines: eval "$(cluster.sh env)"
#   tests/cluster/cluster.sh sockets            kubelet mode: every unix socket path the nodes use, with its
#                                               length in bytes; fails naming any over the 107 a path holds
#   tests/cluster/cluster.sh status             which of the processes are alive
#
# Environment (defaults in brackets):
#   GS_CLUSTER_DIR        state, certs, kubeconfig, logs          [<repo>/build/cluster]
#   GS_CLUSTER_SOCKETS    kubelet mode: the nodes' unix sockets, which must stay short whatever the
#                         cluster directory (nodes.sh); linked from $GS_CLUSTER_DIR/sockets
#                         [/run/gs-<first 10 hex digits of the sha256 of GS_CLUSTER_DIR>]
#   GS_APISERVER_PORT     kube-apiserver secure port              [16443]
#   GS_ETCD_PORT          etcd client port                        [12379]
#   GS_ETCD_PEER_PORT     etcd peer port                          [GS_ETCD_PORT + 1]
#   GS_NODES              number of nodes node1..nodeN            [4]
#   GS_NODE_NAMES         the nodes' names instead, comma-separated (sets GS_NODES), e.g. kind's
#                         gpu-worker,gpu-worker2,gpu-worker3,gpu-worker4     [node1..nodeN]
#   GS_NODE_ALIASES       per node, the value of its label gpu-scheduler.io/node (the scheduler's
#                         node alias label), comma-separated; "-" for none
#                         [node1..nodeN with GS_NODE_NAMES, else none]
#   GS_NODE_GPUS          nvidia.com/gpu per node                 [4]
#   GS_NODE_MODE          fake (API objects) or kubelet (real)    [fake]
#   GS_NODE_IMAGES        kubelet mode: docker-archive tars imported into every node [build/images/*.tar]
#   GS_NODE_IP            kubelet mode: the address nodes and apiserver use [the default route's source]
#   GS_DEVICE_PLUGIN      kubelet mode: 1, each kubelet gets nvidia.com/gpu from the test device plugin
#                         (tests/cluster/device-plugin, GS_NODE_GPUS devices GPU-<uuid>), so its device
#                         manager allocates them; 0, the nodes' status is patched instead (no allocation).
#                         Fake nodes always get the status patch [1 with kubelet, else 0]
#   GS_CLUSTER_TIMEOUT    seconds `up` waits for each stage       [120]
#   GS_ETCD_QUOTA         etcd --quota-backend-bytes              [1 GiB; the benches use 8 GiB]
#   GS_APISERVER_STOP_GRACE  restart-apiserver: SIGTERM, SIGKILL after this many s (0: at once) [2]
#   GS_APISERVER_AUDIT    1: kube-apiserver writes an audit log of every binding (pods/binding, Metadata
#                         level) to logs/audit.log; it survives restarts, unlike apiserver_request_total [0]
#   GS_APISERVER_PROFILING  1: kube-apiserver serves /debug/pprof (bench/profile-daemon.sh takes its CPU
#                         profile while a contender runs) [0]
#   GS_APISERVER_FEATURE_GATES, GS_APISERVER_RUNTIME_CONFIG  kube-apiserver --feature-gates and
#                         --runtime-config, when set (tests/fixtures/record-shapes.sh: the Workload API)
#   K8S_VERSION           the Kubernetes version                  [tests/cluster/versions.sh: 1.37.2]
#   GS_K8S_CACHE          where tests/cluster/prepare.sh caches what it builds [/var/cache/gpu-scheduler]
#   GS_K8S_BIN            directory of the Kubernetes binaries    [GS_K8S_CACHE/k8s-K8S_VERSION/bin]
#   TEST_ASSET_KUBE_APISERVER, TEST_ASSET_KUBE_CONTROLLER_MANAGER, TEST_ASSET_ETCD
#                         override single binaries (the envtest convention)
# Two clusters coexist when they differ in GS_CLUSTER_DIR and the three ports.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

DIR=${GS_CLUSTER_DIR:-$repo/build/cluster}
case $DIR in /*) ;; *) DIR=$PWD/$DIR ;; esac
SOCK_ROOT=${GS_CLUSTER_SOCKETS:-/run/gs-$(printf '%s' "$DIR" | sha256sum | cut -c1-10)}
API_PORT=${GS_APISERVER_PORT:-16443}
ETCD_PORT=${GS_ETCD_PORT:-12379}
ETCD_PEER_PORT=${GS_ETCD_PEER_PORT:-$((ETCD_PORT + 1))}
NODES=${GS_NODES:-4}
# Node names and alias labels: node1..nodeN unless GS_NODE_NAMES says otherwise (kind-like names, whose
# map names then come from the alias label, as deploy/kind/kind-config.yaml labels kind's workers).
NODE_NAMES=${GS_NODE_NAMES:-}
NODE_ALIASES=${GS_NODE_ALIASES:-}
NODE_ALIAS_KEY=gpu-scheduler.io/node
NODE_NAME_LIST=()
if [ -n "$NODE_NAMES" ]; then
	IFS=, read -r -a NODE_NAME_LIST <<<"$NODE_NAMES"
	NODES=${#NODE_NAME_LIST[@]}
	if [ -z "$NODE_ALIASES" ]; then
		NODE_ALIASES=$(seq -s, -f 'node%g' 1 "$NODES")
	fi
fi
NODE_ALIAS_LIST=()
[ -n "$NODE_ALIASES" ] && IFS=, read -r -a NODE_ALIAS_LIST <<<"$NODE_ALIASES"
# node_name N: the Kubernetes name of node N (1-based); node_alias N: its alias label value, or "".
node_name() { if [ -n "$NODE_NAMES" ]; then echo "${NODE_NAME_LIST[$1 - 1]}"; else echo "node$1"; fi; }
node_alias() {
	local a=${NODE_ALIAS_LIST[$1 - 1]:-}
	[ "$a" = - ] && a=
	echo "$a"
}
NODE_GPUS=${GS_NODE_GPUS:-4}
TIMEOUT=${GS_CLUSTER_TIMEOUT:-120}
STOP_GRACE=${GS_APISERVER_STOP_GRACE:-2}
ETCD_QUOTA=${GS_ETCD_QUOTA:-1073741824}
AUDIT=${GS_APISERVER_AUDIT:-0}
# shellcheck source=versions.sh
. "$here/versions.sh"
CACHE=${GS_K8S_CACHE:-/var/cache/gpu-scheduler}
K8S_BIN=${GS_K8S_BIN:-$CACHE/k8s-$K8S_VERSION/bin}
APISERVER=${TEST_ASSET_KUBE_APISERVER:-$K8S_BIN/kube-apiserver}
CONTROLLER_MANAGER=${TEST_ASSET_KUBE_CONTROLLER_MANAGER:-$K8S_BIN/kube-controller-manager}
# The minor version the flags are chosen by: the apiserver's own word, else K8S_VERSION's (no apiserver
# built yet: `cluster.sh sockets` in make unit on a fresh machine).
K8S_MINOR=$({ "$APISERVER" --version 2>/dev/null || true; } | sed -n 's/^Kubernetes v1\.\([0-9]*\)\..*/\1/p')
if [ -z "$K8S_MINOR" ]; then K8S_MINOR=${K8S_VERSION#1.}; K8S_MINOR=${K8S_MINOR%%.*}; fi
# etcd: Debian's 3.4.23 for 1.20; ETCD_VERSION from its module for the others (a 1.3x apiserver's
# watch-list and consistent reads need etcd >= 3.4.31: docs/decisions.md).
if [ "$K8S_MINOR" -le 20 ]; then
	ETCD=${TEST_ASSET_ETCD:-$(command -v etcd || echo /usr/bin/etcd)}
else
	ETCD=${TEST_ASSET_ETCD:-$CACHE/etcd-$ETCD_VERSION/bin/etcd}
fi
# --port (the insecure port) is gone from the controller manager and kube-scheduler since 1.24.
INSECURE_PORT_OFF=()
[ "$K8S_MINOR" -lt 24 ] && INSECURE_PORT_OFF=(--port 0)

NODE_MODE=${GS_NODE_MODE:-fake}
case $NODE_MODE in fake|kubelet) ;; *) echo "cluster: GS_NODE_MODE must be fake or kubelet" >&2; exit 2 ;; esac
# The test device plugin gives real kubelets their GPUs unless told not to; fake nodes have no kubelet.
if [ "$NODE_MODE" = kubelet ]; then DEVICE_PLUGIN=${GS_DEVICE_PLUGIN:-1}; else DEVICE_PLUGIN=0; fi
case $DEVICE_PLUGIN in 0|1) ;; *) echo "cluster: GS_DEVICE_PLUGIN must be 0 or 1" >&2; exit 2 ;; esac
PIDS=$DIR/pids
LOGS=$DIR/logs
PKI=$DIR/pki
# The order `down` stops them in: dependents first.
PROCS="kube-controller-manager kube-apiserver etcd"

log() { printf 'cluster: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# shellcheck source=nodes.sh
. "$here/nodes.sh"
# Real kubelets refuse a node IP of 127.0.0.1, and pods reach the apiserver through the Service
# kubernetes (10.0.0.1), whose endpoint is the advertised address: the apiserver then serves there.
if [ "$NODE_MODE" = kubelet ]; then API_ADDR=$(host_ip); else API_ADDR=127.0.0.1; fi
SERVER=https://$API_ADDR:$API_PORT
NODE_IMAGES=${GS_NODE_IMAGES-}
if [ -z "$NODE_IMAGES" ]; then
	for f in "$repo"/build/images/*.tar; do [ -f "$f" ] && NODE_IMAGES+="$f "; done
fi

# ---- processes ---------------------------------------------------------------------------------

# A PID file is only trusted while the process it names still carries our cluster directory in its
# command line: a recycled PID, or a process of another cluster, is never signalled.
proc_pid() {
	local f=$PIDS/$1.pid pid
	[ -s "$f" ] || return 1
	pid=$(cat "$f")
	[ -r "/proc/$pid/cmdline" ] || return 1
	tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$DIR/" || return 1
	echo "$pid"
}

# start NAME BINARY ARGS...: in the background, stdin closed, output to logs/NAME.log.
start() {
	local name=$1
	shift
	mkdir -p "$PIDS" "$LOGS"
	printf '%q ' "$@" >"$DIR/$name.cmd"
	echo >>"$DIR/$name.cmd"
	"$@" </dev/null >>"$LOGS/$name.log" 2>&1 &
	echo $! >"$PIDS/$name.pid"
}

# alive PID: the process exists and is not a zombie waiting for a parent to reap it.
alive() {
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

# wait_gone SECONDS PIDS...: polls until none is alive; fails if some still are after SECONDS.
wait_gone() {
	local ticks=$(($1 * 10)) p any
	shift
	while :; do
		any=0
		for p in "$@"; do
			# A child of this shell that exited stays a zombie until reaped; wait does not block then.
			if alive "$p"; then any=1; else wait "$p" 2>/dev/null || true; fi
		done
		[ $any = 0 ] && return 0
		[ $ticks -le 0 ] && return 1
		ticks=$((ticks - 1))
		sleep 0.1
	done
}

# stop NAME... [-g GRACE]: SIGTERM to each, SIGKILL to those alive after GRACE seconds (default 10).
# All are signalled at once, so stopping many costs one grace period, not one each.
stop() {
	local grace=10 name pid
	local -a names=() pids=()
	while [ $# -gt 0 ]; do
		case $1 in
		-g) grace=$2; shift 2 ;;
		*) names+=("$1"); shift ;;
		esac
	done
	for name in "${names[@]}"; do
		if pid=$(proc_pid "$name"); then
			pids+=("$pid")
			kill -TERM "$pid" 2>/dev/null || true
		fi
	done
	if [ ${#pids[@]} -gt 0 ] && ! wait_gone "$grace" "${pids[@]}"; then
		for pid in "${pids[@]}"; do
			alive "$pid" || continue
			[ "$grace" -gt 0 ] && log "$(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-60) ($pid) still running ${grace} s after SIGTERM: SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
		done
		wait_gone 2 "${pids[@]}" || true
	fi
	for name in "${names[@]}"; do rm -f "$PIDS/$name.pid"; done
}

port_busy() {
	# /dev/tcp connects: a listener answers, nothing else does.
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

tail_log() {
	log "last lines of $LOGS/$1.log:"
	tail -n 25 "$LOGS/$1.log" >&2 || true
}

# wait_until DESC PROC CMD...: polls CMD every 0.5 s for TIMEOUT s; fails early when PROC died.
wait_until() {
	local desc=$1 proc=$2 deadline=$((SECONDS + TIMEOUT))
	shift 2
	until "$@" >/dev/null 2>&1; do
		if ! proc_pid "$proc" >/dev/null; then
			tail_log "$proc"
			die "$proc exited while waiting for $desc"
		fi
		if [ $SECONDS -ge $deadline ]; then
			tail_log "$proc"
			die "timed out after ${TIMEOUT}s waiting for $desc"
		fi
		sleep 0.5
	done
}

# ---- API access without kubectl version concerns: curl with the admin token --------------------

api() {
	local method=$1 path=$2 body=${3:-} ctype=${4:-application/json} out code
	local args=(-sS --max-time 15 --cacert "$PKI/ca.crt" -H "Authorization: Bearer $(cat "$DIR/admin.token")"
		-X "$method" -w '\n%{http_code}')
	[ -n "$body" ] && args+=(-H "Content-Type: $ctype" --data-binary "$body")
	out=$(curl "${args[@]}" "$SERVER$path") || return 1
	code=${out##*$'\n'}
	out=${out%$'\n'*}
	case $code in
	2??) printf '%s\n' "$out" ;;
	*) log "$method $path: HTTP $code: ${out:0:400}"; return 1 ;;
	esac
}

readyz() { [ "$(api GET /readyz 2>/dev/null)" = ok ]; }

# ---- certificates ------------------------------------------------------------------------------

# sign NAME SUBJECT EXT [CA]: a 2048-bit RSA key and a certificate signed by CA (pki/CA.crt; the cluster
# CA unless said).
sign() {
	local ca=${4:-ca}
	openssl req -new -nodes -newkey rsa:2048 -keyout "$PKI/$1.key" -subj "$2" -out "$PKI/$1.csr" \
		-config "$PKI/openssl.cnf" 2>/dev/null
	openssl x509 -req -in "$PKI/$1.csr" -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" -CAcreateserial -days 30 \
		-sha256 -extfile "$PKI/openssl.cnf" -extensions "$3" -out "$PKI/$1.crt" 2>/dev/null
	rm -f "$PKI/$1.csr"
}

make_pki() {
	mkdir -p "$PKI"
	chmod 700 "$PKI"
	cat >"$PKI/openssl.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
authorityKeyIdentifier = keyid
subjectAltName = IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
[client_ext]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
EOF
	openssl req -x509 -new -nodes -newkey rsa:2048 -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -days 30 -sha256 \
		-subj /CN=gpu-scheduler-test-ca -config "$PKI/openssl.cnf" -extensions ca_ext 2>/dev/null
	[ "$API_ADDR" = 127.0.0.1 ] ||
		sed -i "s/^subjectAltName = IP:127.0.0.1,/subjectAltName = IP:127.0.0.1,IP:$API_ADDR,/" "$PKI/openssl.cnf"
	sign apiserver /CN=kube-apiserver server_ext
	sign admin "/O=system:masters/CN=gs-admin" client_ext
	sign kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" client_ext
	# What the apiserver shows admission webhooks (admission_config): a certificate of a CA of its own,
	# which the webhook's --webhook-client-ca-file trusts alone (not every client of the cluster CA).
	openssl req -x509 -new -nodes -newkey rsa:2048 -keyout "$PKI/webhook-ca.key" -out "$PKI/webhook-ca.crt" \
		-days 30 -sha256 -subj /CN=gpu-scheduler-test-webhook-client-ca -config "$PKI/openssl.cnf" \
		-extensions ca_ext 2>/dev/null
	sign webhook-client /CN=kube-apiserver-webhook-client client_ext webhook-ca
	openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
	openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
	openssl rand -hex 24 >"$DIR/admin.token"
	echo "$(cat "$DIR/admin.token"),gs-admin,gs-admin,system:masters" >"$PKI/tokens.csv"
}

# kubeconfig_write FILE CONTEXT USER CA CREDENTIALS [NAMESPACE]: a kubeconfig (mode 600) for $SERVER with one
# cluster and context named CONTEXT; CA is the cluster's certificate-authority line, CREDENTIALS the user's
# lines (at 4 spaces).
kubeconfig_write() {
	{
		cat <<EOF
apiVersion: v1
kind: Config
current-context: $2
clusters:
- name: $2
  cluster:
    server: $SERVER
    $4
contexts:
- name: $2
  context:
    cluster: $2
    user: $3
EOF
		[ -n "${6:-}" ] && printf '    namespace: %s\n' "$6"
		printf 'users:\n- name: %s\n  user:\n%s\n' "$3" "$5"
	} >"$1"
	chmod 600 "$1"
}

# cert_user NAME: the credentials lines of the client certificate pki/NAME.crt.
cert_user() { printf '    client-certificate: %s\n    client-key: %s' "$PKI/$1.crt" "$PKI/$1.key"; }

write_kubeconfigs() {
	local ca
	ca=$(base64 -w0 <"$PKI/ca.crt")
	# Token auth, inline CA: what most clusters hand out, and self-contained.
	kubeconfig_write "$DIR/kubeconfig" gs-test gs-admin "certificate-authority-data: $ca" \
		"    token: $(cat "$DIR/admin.token")" default
	# The same identity by client certificate, with file references, for tests of that path.
	kubeconfig_write "$DIR/kubeconfig-cert" gs-test gs-admin-cert "certificate-authority: $PKI/ca.crt" "$(cert_user admin)"
}

# kubeconfig_for FILE NAME: a kubeconfig for the client certificate pki/NAME.crt.
kubeconfig_for() { kubeconfig_write "$1" gs "$2" "certificate-authority: $PKI/ca.crt" "$(cert_user "$2")"; }

env_lines() {
	cat <<EOF
export GS_CLUSTER_DIR=$(printf %q "$DIR")
export KUBECONFIG=$(printf %q "$DIR/kubeconfig")
export GS_APISERVER_URL=$SERVER
export GS_APISERVER_PORT=$API_PORT
export GS_ETCD_PORT=$ETCD_PORT
export GS_ETCD_PEER_PORT=$ETCD_PEER_PORT
export GS_CLUSTER_CA=$(printf %q "$PKI/ca.crt")
export GS_WEBHOOK_CLIENT_CA=$(printf %q "$PKI/webhook-ca.crt")
export GS_WEBHOOK_CLIENT_CERT=$(printf %q "$PKI/webhook-client.crt")
export GS_WEBHOOK_CLIENT_KEY=$(printf %q "$PKI/webhook-client.key")
export GS_NODES=$NODES
export GS_NODE_GPUS=$NODE_GPUS
export GS_NODE_MODE=$NODE_MODE
export GS_DEVICE_PLUGIN=$DEVICE_PLUGIN
export GS_NODE_NAMES=$NODE_NAMES
export GS_NODE_ALIASES=$NODE_ALIASES
export GS_CLUSTER_SOCKETS=$(printf %q "$SOCK_ROOT")
export GS_CTR=$(printf %q "$CTR")
export GS_K8S_BIN=$(printf %q "$K8S_BIN")
EOF
}

# ---- the processes -----------------------------------------------------------------------------

start_etcd() {
	mkdir -p "$DIR/etcd"
	chmod 700 "$DIR/etcd"
	start etcd "$ETCD" --name gs-etcd --data-dir "$DIR/etcd" \
		--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster "gs-etcd=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new \
		--quota-backend-bytes "$ETCD_QUOTA" --log-level warn
	wait_until "etcd on port $ETCD_PORT" etcd curl -sf "http://127.0.0.1:$ETCD_PORT/health"
}

# The audit policy of GS_APISERVER_AUDIT=1: bindings only, so the log stays small and cheap.
audit_flags() {
	[ "$AUDIT" = 1 ] || return 0
	cat >"$DIR/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  resources:
  - group: ""
    resources: ["pods/binding"]
- level: None
EOF
	# Blocking mode (the default): the event is written in the request's path.
	printf '%s\n' --audit-policy-file "$DIR/audit-policy.yaml" --audit-log-path "$LOGS/audit.log" \
		--audit-log-format json --audit-log-maxbackup 0
}

# The apiserver's admission configuration: its client certificate for every webhook ("*"), so a
# webhook may take requests from the apiserver alone (docs/deploy.md, "Who may call the webhook").
admission_config() {
	local p
	printf 'apiVersion: v1\nkind: Config\nusers:\n- name: "*"\n  user:\n' >"$DIR/webhook-client.kubeconfig"
	printf '    client-certificate: %s\n    client-key: %s\n' "$PKI/webhook-client.crt" "$PKI/webhook-client.key" \
		>>"$DIR/webhook-client.kubeconfig"
	{
		printf 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n'
		for p in MutatingAdmissionWebhook ValidatingAdmissionWebhook; do
			printf -- '- name: %s\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n' "$p"
			printf '    kind: WebhookAdmissionConfiguration\n    kubeConfigFile: %s\n' "$DIR/webhook-client.kubeconfig"
		done
	} >"$DIR/admission.yaml"
	printf '%s\n' --admission-control-config-file "$DIR/admission.yaml"
}

start_apiserver() {
	local -a audit admission extra=()
	mapfile -t audit < <(audit_flags)
	mapfile -t admission < <(admission_config)
	# A newer apiserver refuses to publish a loopback address as the Service kubernetes' endpoint;
	# fake nodes run no pod that would use it.
	[ "$K8S_MINOR" -gt 20 ] && [ "$API_ADDR" = 127.0.0.1 ] && extra+=(--endpoint-reconciler-type none)
	# Node,RBAC as in production: the tests see the same 403s a real cluster gives. The admission
	# plugins are the 1.20 defaults plus NodeRestriction; MutatingAdmissionWebhook is spelled out so a
	# change of defaults in another Kubernetes version (TEST_ASSET_KUBE_APISERVER) cannot drop it.
	start kube-apiserver "$APISERVER" \
		--etcd-servers "http://127.0.0.1:$ETCD_PORT" \
		--bind-address "$API_ADDR" --advertise-address "$API_ADDR" --secure-port "$API_PORT" \
		--cert-dir "$PKI" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
		--client-ca-file "$PKI/ca.crt" --token-auth-file "$PKI/tokens.csv" \
		--service-account-issuer https://kubernetes.default.svc \
		--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
		--api-audiences https://kubernetes.default.svc \
		--service-cluster-ip-range 10.0.0.0/24 \
		--authorization-mode Node,RBAC \
		--enable-admission-plugins NodeRestriction,MutatingAdmissionWebhook,ValidatingAdmissionWebhook \
		--kubelet-client-certificate "$PKI/kubelet-client.crt" --kubelet-client-key "$PKI/kubelet-client.key" \
		--kubelet-preferred-address-types InternalIP \
		--allow-privileged=true --profiling="$([ "${GS_APISERVER_PROFILING:-0}" = 1 ] && echo true || echo false)" \
		--v=1 "${audit[@]}" "${admission[@]}" "${extra[@]}" \
		${GS_APISERVER_FEATURE_GATES:+--feature-gates "$GS_APISERVER_FEATURE_GATES"} \
		${GS_APISERVER_RUNTIME_CONFIG:+--runtime-config "$GS_APISERVER_RUNTIME_CONFIG"}
	wait_until "kube-apiserver /readyz on $SERVER" kube-apiserver readyz
}

start_controller_manager() {
	# With fake nodes nodelifecycle is off: with no kubelet to renew node Leases it would mark every
	# node NotReady and taint it unreachable after --node-monitor-grace-period (docs/cluster.md,
	# "Nodes"). Real kubelets need it: it lifts the not-ready taint a node is registered with.
	# No serving ports (--port/--secure-port 0) so that two clusters never collide.
	local controllers='*,-nodelifecycle'
	[ "$NODE_MODE" = kubelet ] && controllers='*'
	start kube-controller-manager "$CONTROLLER_MANAGER" \
		--kubeconfig "$DIR/kubeconfig" --leader-elect=false \
		--controllers "$controllers" \
		--service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
		--use-service-account-credentials=false \
		--cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
		"${INSECURE_PORT_OFF[@]}" --secure-port 0 --v=1
}

# ---- nodes -------------------------------------------------------------------------------------

make_nodes() {
	local i name now res alias
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	# pods: 1000, not a kubelet's 110: these nodes carry the integration tests' thousand-pod backlogs
	# (nothing runs there), and the scheduler checks pod slots like the kubelet does.
	res="{\"cpu\":\"32\",\"memory\":\"256Gi\",\"pods\":\"1000\",\"ephemeral-storage\":\"500Gi\",\"nvidia.com/gpu\":\"$NODE_GPUS\"}"
	for i in $(seq 1 "$NODES"); do
		name=$(node_name "$i")
		alias=$(node_alias "$i")
		api POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$name\",
			\"labels\":{\"kubernetes.io/hostname\":\"$name\",\"kubernetes.io/os\":\"linux\",${alias:+\"$NODE_ALIAS_KEY\":\"$alias\",}
			\"kubernetes.io/arch\":\"amd64\",\"gpu-scheduler.test/fake\":\"true\"}}}" >/dev/null
		# TaintNodesByCondition adds node.kubernetes.io/not-ready at creation; the node lifecycle
		# controller would lift it, and it is off.
		api PATCH "/api/v1/nodes/$name" '{"spec":{"taints":null}}' application/merge-patch+json >/dev/null
		# Status only changes through the status subresource.
		api PATCH "/api/v1/nodes/$name/status" "{\"status\":{\"capacity\":$res,\"allocatable\":$res,
			\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",
			\"message\":\"gpu-scheduler test node, no kubelet\",
			\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}],
			\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"127.0.0.1\"},{\"type\":\"Hostname\",\"address\":\"$name\"}],
			\"nodeInfo\":{\"architecture\":\"amd64\",\"operatingSystem\":\"linux\",\"kubeletVersion\":\"v$K8S_VERSION\",
			\"kubeProxyVersion\":\"v$K8S_VERSION\",\"containerRuntimeVersion\":\"none://0\",\"kernelVersion\":\"\",
			\"osImage\":\"\",\"machineID\":\"\",\"systemUUID\":\"\",\"bootID\":\"\"}}}" \
			application/merge-patch+json >/dev/null
	done
}

nodes_ready() {
	local out n
	out=$(api GET /api/v1/nodes) || return 1
	# One line per node that is Ready and advertises the GPUs; grep keeps jq out of the dependencies.
	n=$(printf '%s' "$out" | tr -d ' \n' | grep -o "\"allocatable\":{[^}]*\"nvidia.com/gpu\":\"$NODE_GPUS\"" | wc -l)
	[ "$n" -ge "$NODES" ]
}

# The service-account and token controllers have run once the default namespace has its account
# with a token secret: proof that the controller manager is up and talking to the apiserver.
# Since 1.24 no token Secret is made for a service account (tokens come from the TokenRequest API).
default_sa_ready() {
	if [ "$K8S_MINOR" -ge 24 ]; then
		api GET /api/v1/namespaces/default/serviceaccounts/default >/dev/null 2>&1
	else
		api GET /api/v1/namespaces/default/serviceaccounts/default 2>/dev/null | tr -d ' \n' |
			grep -q '"secrets":\[{'
	fi
}

# ---- subcommands -------------------------------------------------------------------------------

# Every process `up` may have started, the nodes' first.
all_procs() {
	local d
	for d in "$DIR"/nodes/node[0-9]*; do
		[ -d "$d" ] && [ ! -L "$d" ] && printf 'kubelet-%s containerd-%s ' "${d##*/}" "${d##*/}"
	done
	[ -d "$DIR/nodes" ] && printf 'kube-proxy kube-scheduler '
	echo "$PROCS"
}

any_alive() {
	local p
	for p in $(all_procs); do proc_pid "$p" >/dev/null && return 0; done
	return 1
}

check_binaries() {
	local b
	for b in "$ETCD" "$APISERVER" "$CONTROLLER_MANAGER"; do
		[ -x "$b" ] || die "$b is missing: run tests/cluster/build-k8s.sh and build-deps.sh etcd (or set TEST_ASSET_*, GS_K8S_BIN)"
	done
	for b in openssl curl; do
		command -v $b >/dev/null || die "$b is needed"
	done
}

cmd_up() {
	if any_alive; then
		die "a cluster is already up in $DIR ($(cmd_status | tr '\n' ' ')); run '$0 down' first"
	fi
	# First: a socket path too long would otherwise surface minutes later as a node that never comes up.
	[ "$NODE_MODE" = kubelet ] && check_socket_paths
	check_binaries
	[ "$NODE_MODE" = kubelet ] && check_node_binaries
	local p
	for p in "$API_PORT" "$ETCD_PORT" "$ETCD_PEER_PORT"; do
		port_busy "$p" && die "port $p is in use (another cluster? set GS_APISERVER_PORT, GS_ETCD_PORT, GS_ETCD_PEER_PORT)"
	done
	# Leftovers of a cluster that died without `down`.
	nodes_down
	rm -rf "$DIR/etcd" "$PKI" "$PIDS" "$LOGS"
	mkdir -p "$DIR" "$LOGS"
	# A failure half-way must not leave processes behind.
	trap 'rc=$?; if [ $rc -ne 0 ]; then log "up failed: stopping what it started"; cmd_down 2>/dev/null || true; fi' EXIT
	local t0=$SECONDS
	make_pki
	write_kubeconfigs
	env_lines >"$DIR/env"
	start_etcd
	start_apiserver
	log "kube-apiserver ready on $SERVER after $((SECONDS - t0)) s"
	start_controller_manager
	if [ "$NODE_MODE" = kubelet ]; then nodes_up; else make_nodes; fi
	wait_until "$NODES Ready nodes with nvidia.com/gpu=$NODE_GPUS" kube-apiserver nodes_ready
	wait_until "the default service account (and before 1.24 its token) (controller manager)" kube-controller-manager default_sa_ready
	trap - EXIT
	log "up in $((SECONDS - t0)) s: $NODES nodes ($NODE_MODE$([ "$DEVICE_PLUGIN" = 1 ] && echo ', GPUs from the device plugin')${NODE_NAMES:+: $NODE_NAMES}${NODE_ALIASES:+, labelled $NODE_ALIAS_KEY=$NODE_ALIASES}), KUBECONFIG=$DIR/kubeconfig"
	log "  . $DIR/env   # to use it from a shell"
}

cmd_down() {
	local p
	nodes_down
	for p in $PROCS; do stop "$p"; done
	# State goes; logs stay for a post-mortem until the next `up`.
	rm -rf "$DIR/etcd" "$PKI" "$PIDS" "$DIR"/*.cmd "$DIR"/*.kubeconfig "$DIR/kubeconfig" "$DIR/kubeconfig-cert" \
		"$DIR/admin.token" "$DIR/env"
	log "down ($DIR)"
}

# restart-apiserver [kill]: with kill, SIGKILL at once by the PID `up` recorded (a crash: no response to
# requests in flight, watches cut without a final chunk); otherwise SIGTERM and GS_APISERVER_STOP_GRACE.
cmd_restart_apiserver() {
	local pid
	proc_pid kube-apiserver >/dev/null || die "kube-apiserver is not running in $DIR"
	proc_pid etcd >/dev/null || die "etcd is not running in $DIR"
	# The port is the one `up` used, whatever this shell's environment says.
	API_PORT=$(sed -n 's/^export GS_APISERVER_PORT=//p' "$DIR/env")
	SERVER=$(sed -n 's/^export GS_APISERVER_URL=//p' "$DIR/env")
	# A 1.20 apiserver stops listening at once on SIGTERM but then waits up to a minute for requests
	# in flight, open watches included; clients would see a minute of refused connections with their
	# watches hanging. A short grace, then SIGKILL, makes it a restart.
	if [ "${1:-}" = kill ]; then
		pid=$(proc_pid kube-apiserver)
		kill -KILL "$pid"
		wait_gone 10 "$pid" || die "kube-apiserver ($pid) still alive 10 s after SIGKILL"
		rm -f "$PIDS/kube-apiserver.pid"
		log "kube-apiserver ($pid) killed with SIGKILL"
	else
		stop kube-apiserver -g "$STOP_GRACE"
	fi
	# A killed Go process shows as a zombie as soon as its main thread is gone, while its other threads,
	# which share the descriptors, may still hold the listening socket for a moment: the new process
	# would then fail with "address already in use". Wait until nothing answers on the port.
	local i
	for i in $(seq 1 100); do
		port_busy "$API_PORT" || break
		sleep 0.1
	done
	local t0=$SECONDS
	# The flags are those `up` used, replayed from the saved command line.
	local -a argv
	eval "argv=($(cat "$DIR/kube-apiserver.cmd"))"
	start kube-apiserver "${argv[@]}"
	wait_until "kube-apiserver /readyz after restart" kube-apiserver readyz
	log "kube-apiserver restarted, ready after $((SECONDS - t0)) s"
}

cmd_status() {
	local p pid rc=0
	for p in $(all_procs); do
		if pid=$(proc_pid "$p"); then echo "$p $pid"; else echo "$p down"; rc=1; fi
	done
	return $rc
}

cmd_env() {
	# What `up` recorded wins: it names the ports the running cluster really uses.
	if [ -f "$DIR/env" ]; then cat "$DIR/env"; else env_lines; fi
}

case ${1:-} in
up) cmd_up ;;
down) cmd_down ;;
restart-apiserver) cmd_restart_apiserver ;;
kill-apiserver) cmd_restart_apiserver kill ;;
stop-kubelet | start-kubelet)
	[ "$NODE_MODE" = kubelet ] && [ -d "$DIR/nodes/node${2:-x}" ] || die "$1: no kubelet node${2:-?} in $DIR"
	SERVER=$(sed -n 's/^export GS_APISERVER_URL=//p' "$DIR/env")
	if [ "$1" = stop-kubelet ]; then kubelet_stop "$2"; else kubelet_start "$2"; fi
	;;
env) cmd_env ;;
sockets)
	socket_paths | while IFS= read -r p; do printf '%s %s\n' "$(LC_ALL=C; printf '%s' "$p" | wc -c)" "$p"; done
	check_socket_paths
	;;
status) cmd_status ;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
