# shellcheck shell=bash
# tests/integration/common.sh: scheduler-specific helpers on top of tests/lib.sh, sourced by the
# scheduler's integration tests (lib.sh first).
#
#   node_make NAME [Ready]        a kubelet-less Node like cluster.sh's, Ready True unless told
#   node_set_ready NAME True|False|Unknown
#   node_delete NAME
#   pod_yaml NAME [ENTRY...]      a bare pod with schedulerName $SCHEDULER_NAME and the map
#                                 (POD_ENV=VALUE gives the container CUDA_VISIBLE_DEVICES=VALUE)
#   ours NAME ENTRY [SPEC_YAML [CONTAINER_YAML]]
#                                 applies pod_yaml NAME ENTRY with extra container lines (resources,
#                                 ports) and spec lines (selectors, tolerations); prints kubectl's output
#   pod_node POD                  spec.nodeName ("" while pending)
#   pod_on POD NODE               test form
#   pod_assigned POD              the gpu-scheduler.io/assigned annotation
#   pod_condition POD             "status reason" of PodScheduled
#   pod_events POD                messages of the events about POD, one per line
#   metric NAME[{LABELS}]         the value of one series on /metrics (0 when absent)
#   webhook_register URL [CA_FILE]  a MutatingWebhookConfiguration gs-test-$NS for pods CREATE in $NS
#                                 only (failurePolicy Ignore), deleted at exit; sets WEBHOOK_CONFIG
#   webhook_daemon DIR [ARGS...]  the daemon serving $NS's webhook: a self-signed pair for 127.0.0.1 in DIR,
#                                 webhook_register on a free port, daemon_start with --require-env=false and
#                                 ARGS; WEBHOOK_DAEMON keeps the arguments (a restart: daemon_start
#                                 "${WEBHOOK_DAEMON[@]}" with DAEMON_WEBHOOK=1)
#   kubeconfig_with SERVER CA_FILE TOKEN [TLS_SERVER_NAME]
#                                 a kubeconfig on stdout (a ServiceAccount's token, a wrong CA...)
#   sa_role_kubeconfig FILE NAME SA OUT
#                                 the ClusterRoles of the deploy/ file FILE (NAME renamed gs-test-SA-$NS),
#                                 NAME's bound to ServiceAccount SA of $NS (both deleted at exit), and
#                                 a kubeconfig with SA's token in OUT; SA_TOKEN is the token
#   test_ca DIR DAYS CN           a P-256 CA in DIR/ca.crt, DIR/ca.key
#   test_pair DIR DAYS CA_DIR     a serving pair for 127.0.0.1 in DIR/tls.{crt,key}, signed by CA_DIR's CA
#   secret_volume VOL VERSION     VOL laid out like a Secret volume: tls.crt -> ..data/tls.crt,
#                                 ..data -> VERSION (a directory made by test_pair)
#   secret_swap VOL VERSION       the kubelet's atomic swap of ..data to VERSION
#
# Leader-elected replicas (test_leader, chaos_leader), each with its own health port (serving /metrics
# and /debug: --insecure-debug-and-metrics, no secure port) and log:
#   replica NAME [ARGS...]        starts a daemon electing on Lease $LEASE in $NS with ARGS, or without
#                                 any with REPLICA_ARGS (default --no-webhook); sets RURL, RLOG, RPID[NAME]; waits
#                                 for /readyz; killed (even if stopped) at exit
#   rmetric NAME SERIES           one series of replica NAME's /metrics (0 when absent)
#   leads NAME, follows NAME      its gpu_scheduler_leader is 1, 0
#   binds NAME [RESULT]           its gpu_scheduler_binding_attempts_total{result=RESULT} (success)
#
# The daemon asked through the apiserver's pod proxy, as explain and status ask the leader:
#   proxy_pod NAME                a pod (of no scheduler) whose IP is this machine's address (the apiserver
#                                 refuses to proxy to loopback; a bare sandbox gets a TEST-NET-2 address on
#                                 a dummy link, removed at exit), so https:NAME:PORT/proxy reaches a daemon
#                                 listening on 0.0.0.0:PORT; 1 when this machine has no address to give
#   lease_holder LEASE POD        a Lease in $NS naming POD as its holder, as main.c names the leader

node_make() {
	local name=$1 now res
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	res='{"cpu":"32","memory":"256Gi","pods":"110","nvidia.com/gpu":"4"}'
	api POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$name\",
		\"labels\":{\"kubernetes.io/hostname\":\"$name\",\"gpu-scheduler.test/fake\":\"true\"}}}" >/dev/null || return 1
	api PATCH "/api/v1/nodes/$name" '{"spec":{"taints":null}}' application/merge-patch+json >/dev/null
	api PATCH "/api/v1/nodes/$name/status" "{\"status\":{\"capacity\":$res,\"allocatable\":$res,
		\"conditions\":[{\"type\":\"Ready\",\"status\":\"${2:-True}\",\"reason\":\"Test\",
		\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}]}}" application/merge-patch+json >/dev/null
}

kubeconfig_with() {
	cat <<YAML
apiVersion: v1
kind: Config
current-context: t
clusters:
- name: t
  cluster:
    server: $1
    certificate-authority: $2
${4:+    tls-server-name: $4}
contexts:
- name: t
  context: {cluster: t, user: u}
users:
- name: u
  user:
    token: $3
YAML
}


sa_role_kubeconfig() {
	local file=$1 name=$2 sa=$3 kcfg=$4 role=gs-test-$3-$NS
	# global: check's own locals (out, rc, what) would hide a local of this function inside its eval
	SA_ROLES=$kcfg.roles.yaml
	sed -e "s/^  name: $name\$/  name: $role/" "$file" |
		awk 'BEGIN { RS = "---\n"; ORS = "---\n" } /kind: ClusterRole\n/ && !/ClusterRoleBinding/' >"$SA_ROLES"
	check "the ClusterRole from ${file#"$GS_ROOT"/} applies" eval 'NS= kc apply -f "$SA_ROLES" >/dev/null'
	defer "NS= kc delete clusterrole $role >/dev/null 2>&1"
	defer "NS= kc delete clusterrolebinding $role >/dev/null 2>&1"
	kc create serviceaccount "$sa" >/dev/null
	NS= kc create clusterrolebinding "$role" --clusterrole "$role" --serviceaccount "$NS:$sa" >/dev/null
	check_eventually "a ServiceAccount token was minted" 30 sa_token "$sa"
	SA_TOKEN=$(sa_token "$sa")
	kubeconfig_with "$GS_APISERVER_URL" "$GS_CLUSTER_CA" "$SA_TOKEN" >"$kcfg"
}

node_set_ready() {
	local now
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	api PATCH "/api/v1/nodes/$1/status" "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"$2\",
		\"reason\":\"Test\",\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}]}}" \
		application/strategic-merge-patch+json >/dev/null
}

node_delete() { api DELETE "/api/v1/nodes/$1" >/dev/null; }

pod_yaml() {
	local name=$1
	shift
	printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n' "$name"
	[ -n "${POD_LABELS:-}" ] && printf '  labels:\n%s\n' "$POD_LABELS"
	if [ $# -gt 0 ] || [ -n "${POD_ANNOTATIONS:-}" ]; then
		printf '  annotations:\n'
		[ -n "${POD_ANNOTATIONS:-}" ] && printf '%s\n' "$POD_ANNOTATIONS"
		[ $# -gt 0 ] && INDENT=4 map_annotation "$@"
	fi
	cat <<YAML
spec:
  schedulerName: $SCHEDULER_NAME
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: busybox:stable
    command: ["sleep", "3600"]
YAML
	if [ -n "${POD_ENV:-}" ]; then
		printf '    env:\n    - name: CUDA_VISIBLE_DEVICES\n      value: "%s"\n' "$POD_ENV"
	fi
}

# gpm_apply NAME MAP [SPEC_LINES]: a GPUPlacementMap NAME of $NS applied, MAP's "\n" read as line
# breaks, SPEC_LINES (indented two spaces) added to its spec; prints kubectl's output.
gpm_apply() {
	local map
	map=$(printf '%b' "$2" | sed 's/^/      /')
	kc apply -f - 2>&1 <<YAML
apiVersion: gpu-scheduler.io/v1alpha1
kind: GPUPlacementMap
metadata:
  name: $1
spec:
  map: |
$map
${3:-}
YAML
}

ours() {
	local name=$1 entry=$2 spec=${3:-} ctr=${4:-}
	{
		pod_yaml "$name" "$entry"
		[ -n "$ctr" ] && printf '%s\n' "$ctr"
		[ -n "$spec" ] && printf '%s\n' "$spec"
	} | kc apply -f - 2>&1
}

pod_node() { kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }

pod_on() {
	local n
	n=$(pod_node "$1")
	[ "$n" = "$2" ] || { echo "pod $1 is on '${n}', want $2"; return 1; }
}

pod_assigned() { kc get pod "$1" -o jsonpath='{.metadata.annotations.gpu-scheduler\.io/assigned}' 2>/dev/null; }

pod_condition() {
	kc get pod "$1" -o jsonpath='{range .status.conditions[?(@.type=="PodScheduled")]}{.status} {.reason}{end}' 2>/dev/null
}

pod_events() {
	kc get events --field-selector "involvedObject.name=$1" -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' 2>/dev/null
}

# pod_event_has POD REGEX: an event about POD matches (grep -E).
pod_event_has() {
	pod_events "$1" | grep -qE "$2" || { echo "events of $1:"; pod_events "$1"; return 1; }
}

metric() {
	daemon_http /metrics | awk -v k="$1" '$1 == k { v = $2 } END { print (v == "" ? 0 : v) }'
}

webhook_register() {
	local url=$1 ca=${2:-}
	WEBHOOK_CONFIG=gs-test-$NS
	kc label namespace "$NS" "gpu-scheduler.test/webhook=$NS" --overwrite >/dev/null
	defer "NS= kc delete mutatingwebhookconfiguration $WEBHOOK_CONFIG >/dev/null 2>&1"
	NS= kc apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $WEBHOOK_CONFIG
webhooks:
- name: gpu-scheduler.gpu-scheduler.io
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Ignore
  timeoutSeconds: 5
  reinvocationPolicy: Never
  clientConfig:
    url: $url
${ca:+    caBundle: $(base64 -w0 "$ca")}
  rules:
  - {operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"]}
  namespaceSelector:
    matchLabels:
      gpu-scheduler.test/webhook: $NS
YAML
}

webhook_daemon() {
	local dir=$1 port
	shift
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$dir/tls.key" -out "$dir/tls.crt" 2>/dev/null
	port=$(free_port)
	webhook_register "https://127.0.0.1:$port/mutate" "$dir/tls.crt"
	WEBHOOK_DAEMON=(--require-env=false --webhook-addr "127.0.0.1:$port" --tls-cert-file "$dir/tls.crt"
		--tls-private-key-file "$dir/tls.key" "$@")
	DAEMON_WEBHOOK=1 daemon_start "${WEBHOOK_DAEMON[@]}"
}

test_ca() {
	mkdir -p "$1"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$2" -subj "/CN=$3" \
		-keyout "$1/ca.key" -out "$1/ca.crt" 2>/dev/null
}

test_pair() {
	mkdir -p "$1"
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
		-keyout "$1/tls.key" -out "$1/tls.csr" 2>/dev/null
	printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$1/ext"
	openssl x509 -req -in "$1/tls.csr" -CA "$3/ca.crt" -CAkey "$3/ca.key" -CAcreateserial -days "$2" \
		-extfile "$1/ext" -out "$1/tls.crt" 2>/dev/null
}

secret_volume() {
	ln -s "$2" "$1/..data"
	ln -s ..data/tls.crt "$1/tls.crt"
	ln -s ..data/tls.key "$1/tls.key"
}

secret_swap() { ln -sfn "$2" "$1/..data.tmp" && mv -T "$1/..data.tmp" "$1/..data"; }

declare -gA RPID RURL RLOG
REPLICA_ARGS=(--no-webhook)

replica() {
	local name=$1 port extra=("${REPLICA_ARGS[@]}")
	shift
	[ $# -gt 0 ] && extra=("$@")
	port=$(free_port)
	RURL[$name]=http://127.0.0.1:$port
	RLOG[$name]=$GS_TEST_LOGS/$T_NAME-$name.log
	mkdir -p "$GS_TEST_LOGS"
	POD_NAME=$name "$GS_DAEMON_BIN" --kubeconfig "$KUBECONFIG" --health-addr "127.0.0.1:$port" \
		--secure-addr "" --insecure-debug-and-metrics "${extra[@]}" \
		--require-env=false --log-level debug --leader-elect --leader-elect-resource-name "$LEASE" \
		--leader-elect-resource-namespace "$NS" </dev/null >"${RLOG[$name]}" 2>&1 &
	RPID[$name]=$!
	defer "kill -CONT ${RPID[$name]} 2>/dev/null; kill -KILL ${RPID[$name]} 2>/dev/null || true"
	wait_for "$name ready" 30 eval '[ "$(curl -sf --max-time 2 '"${RURL[$name]}"'/readyz)" = ok ]'
}

rmetric() { curl -sf --max-time 2 "${RURL[$1]}/metrics" | awk -v k="$2" '$1 == k { v = $2 } END { print (v == "" ? 0 : v) }'; }
leads() { [ "$(rmetric "$1" gpu_scheduler_leader)" = 1 ]; }
follows() { [ "$(rmetric "$1" gpu_scheduler_leader)" = 0 ]; }
binds() { rmetric "$1" "gpu_scheduler_binding_attempts_total{result=\"${2:-success}\"}"; }

# plugin_pod NODE NAME GPUS: a pod of another scheduler bound to NODE at creation whose container
# limits nvidia.com/gpu to GPUS (what the device plugin serves; no kubelet here: it stays Pending, as
# good as running for the count).
plugin_pod() {
	kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $2}
spec:
  nodeName: $1
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: busybox:stable
    resources: {limits: {nvidia.com/gpu: "$3"}}
YAML
}

proxy_pod() {
	local hostip
	hostip=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
	if [ -z "$hostip" ] && ip link add gs-proxy0 type dummy 2>/dev/null; then
		defer "ip link del gs-proxy0 2>/dev/null"
		ip addr add 198.51.100.77/32 dev gs-proxy0 && ip link set gs-proxy0 up && hostip=198.51.100.77
	fi
	[ -n "$hostip" ] || return 1
	kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
spec:
  schedulerName: gs-test-nobody
  containers: [{name: main, image: busybox:stable}]
YAML
	api PATCH "/api/v1/namespaces/$NS/pods/$1/status" \
		"{\"status\":{\"podIP\":\"$hostip\",\"podIPs\":[{\"ip\":\"$hostip\"}]}}" application/merge-patch+json >/dev/null
}

lease_holder() {
	kc apply -f - >/dev/null <<YAML
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: $1}
spec: {holderIdentity: ${2}_0badcafe, leaseDurationSeconds: 15}
YAML
}
