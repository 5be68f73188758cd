#!/usr/bin/env bash
# The node agent (`gpu-scheduler agent`, docs/agent.md) against the real apiserver, as a host process
# with a ServiceAccount token bound to the ClusterRole of deploy/agent (the RBAC is enough, and no
# more), on a kubelet-less node, with a --socket that does not exist and a driver directory of two GPUs:
# the node gets the annotation with the GPU index table (bus order) and the error line after one
# interval, /metrics counts the kubelet errors and the publishes, /healthz answers; an unchanged
# annotation is not written again until the heartbeat, which rewrites its time; a restarted agent
# does not rewrite what it finds unchanged, and replaces an unreadable annotation; SIGTERM ends it, 0.
# (What the kubelet lists, the settle period across a kubelet restart: tests/e2e/test_device_plugin.sh.)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

work=$(test_workdir)
node=gs-agent-$(printf '%04x' $RANDOM)
ANN=gpu-scheduler.io/devices-in-use
node_make "$node" || { fail "node $node" "cannot create it"; exit 1; }
defer "node_delete $node"

# ---- RBAC: deploy/agent's ClusterRole under a test name, bound to a ServiceAccount of $NS -------------
sa_role_kubeconfig "$GS_ROOT/deploy/agent/rbac.yaml" gpu-scheduler-agent agent "$work/sa.kubeconfig"
sat=$SA_TOKEN
can() { NS= kc --token "$sat" auth can-i "$@" 2>/dev/null | grep -qx yes; }
for v in "get nodes" "patch nodes" "list pods" "watch pods"; do
	check "RBAC allows: $v" can $v --all-namespaces
done
for v in "update nodes" "delete nodes" "list nodes" "patch pods" "get secrets" "create pods"; do
	check "RBAC refuses: $v" eval "! can $v --all-namespaces"
done

# ---- two GPUs as the NVIDIA driver lists them, directory order not bus order ------------------------
gpus=$work/gpus
mkdir -p "$gpus/0000:86:00.0" "$gpus/0000:3b:00.0"
printf 'Model:           Test\nGPU UUID:        GPU-bbbbbbbb\nBus Location:    0000:86:00.0\n' >"$gpus/0000:86:00.0/information"
printf 'Model:           Test\nGPU UUID:        GPU-aaaaaaaa\nBus Location:    0000:3b:00.0\n' >"$gpus/0000:3b:00.0/information"

ann() { NS= kc get node "$node" -o jsonpath="{.metadata.annotations.gpu-scheduler\.io/devices-in-use}"; }
set_ann() {
	api PATCH "/api/v1/nodes/$node" "$(jq -cn --arg k "$ANN" --arg v "$1" '{metadata: {annotations: {($k): $v}}}')" \
		application/merge-patch+json >/dev/null
}
# What another agent published long ago: the start reads it (the settle base) and replaces it.
set_ann $'v1 2026-01-01T00:00:00Z\nnvidia.com/gpu GPU-old gs-x/p'

AGENT_PID=
APORT=
agent_start() {
	local n=$1
	shift
	APORT=$(free_port) || { fail "agent" "no free port"; return 1; }
	ALOG=$work/agent-$n.log
	"$GS_DAEMON_BIN" agent --kubeconfig "$work/sa.kubeconfig" --node "$node" --socket "$work/none.sock" \
		--interval-ms 500 --nvidia-proc-dir "$gpus" --addr "127.0.0.1:$APORT" --log-level debug "$@" \
		</dev/null >"$ALOG" 2>&1 &
	AGENT_PID=$!
	defer "kill $AGENT_PID 2>/dev/null; wait $AGENT_PID 2>/dev/null; true"
	echo "  agent $n: pid $AGENT_PID, log $ALOG"
}
# agent_stop: SIGTERM, then AGENT_RC is its exit status (in this shell: `wait` needs the parent).
agent_stop() {
	kill -TERM "$AGENT_PID"
	wait "$AGENT_PID"
	AGENT_RC=$?
}
ahttp() { curl -sf --max-time 2 "http://127.0.0.1:$APORT$1"; }
am() { ahttp /metrics | awk -v k="$1" '$1 == k { v = $2 } END { print (v == "" ? 0 : v) }'; }
ge() { local v; v=$(am "$1"); awk -v v="$v" -v n="$2" 'BEGIN { exit !(v >= n) }' || { echo "$1 = $v"; return 1; }; }
first_line() { ann | head -n 1; }

agent_start 1 --heartbeat-s 6
check_eventually "/healthz answers ok" 10 eval '[ "$(ahttp /healthz)" = ok ]'
error_line() { ann | grep -qx "error no data from the kubelet: $work/none.sock /v1.PodResourcesLister/List: connect: the socket does not exist"; }
check_eventually "the node's annotation gets the error line (the socket is missing)" 10 error_line
echo "  annotation: $(ann | tr '\n' '|')"
check "its index table is the GPUs in bus order" eval 'ann | sed -n 2p | grep -qx "index 0=GPU-aaaaaaaa 1=GPU-bbbbbbbb"'
check "it is v1, three lines, the old device gone" eval '[ "$(ann | wc -l)" = 2 ] && first_line | grep -qE "^v1 [0-9T:Z-]{20}$"'
check "the agent logs that the error line waits one interval" \
	grep -q "retrying every 500 ms, the annotation says so after 500 ms" "$ALOG"
check "/metrics: kubelet errors by reason" ge 'gpu_scheduler_agent_kubelet_errors_total{reason="socket_missing"}' 2
check "/metrics: lists by result" ge 'gpu_scheduler_agent_lists_total{result="error"}' 2
check "/metrics: publishes by result" ge 'gpu_scheduler_agent_publishes_total{result="success"}' 1
check "/metrics: no device published, two GPUs indexed" eval \
	'[ "$(am gpu_scheduler_agent_devices_published)" = 0 ] && [ "$(am gpu_scheduler_agent_index_gpus)" = 2 ]'
check "/metrics: no pod names" eval '! ahttp /metrics | grep -q "gs-x"'
check_eventually "/metrics: seconds since the last List counts from the start (never answered)" 10 ge gpu_scheduler_agent_seconds_since_last_list 2
p1=$(am 'gpu_scheduler_agent_publishes_total{result="success"}')
t1=$(first_line)
sleep 1.5
check "unchanged: not written again within the heartbeat (3 Lists)" eval \
	'[ "$(am "gpu_scheduler_agent_publishes_total{result=\"success\"}")" = "$p1" ] && [ "$(first_line)" = "$t1" ]'
check_eventually "the heartbeat (6 s) rewrites the time line only" 12 eval \
	'[ "$(first_line)" != "$t1" ] && error_line'
check "the heartbeat is one more publish" ge 'gpu_scheduler_agent_publishes_total{result="success"}' "$((p1 + 1))"
agent_stop
check "SIGTERM: the agent exits 0" equals 0 echo "$AGENT_RC"
check "it logged the streak once" eval '[ "$(grep -c "retrying every 500 ms" "$ALOG")" = 1 ]'

# ---- a restart finds its own annotation unchanged: no write before the heartbeat --------------------
# A pod bound to the node, with a secret in its env: the agent's watch of the node's pods asks for their
# metadata alone (issue 36: a stolen agent token read every pod's env). The same request, with the
# agent's token and Accept header (from its debug log), answers the pod without spec or env. (Created,
# not applied: `kubectl apply` copies the whole object, env included, into an annotation.)
kc create -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: envpod}
spec:
  nodeName: $node
  containers:
  - {name: c, image: gs-test/none:1, env: [{name: TOKEN, value: s3cr3t-value}]}
YAML
agent_start 2 --heartbeat-s 60
check_eventually "restarted: Lists fail again" 10 ge 'gpu_scheduler_agent_lists_total{result="error"}' 3
check "restarted: the annotation it found is not written again" eval \
	'[ "$(am "gpu_scheduler_agent_publishes_total{result=\"success\"}")" = 0 ]'
check "restarted: it read the annotation at start" grep -q "the annotation says 0 devices held, with an error line" "$ALOG"
check_eventually "its pod watch listed the node's one pod" 10 grep -qE "listed 1 at resourceVersion" "$ALOG"
accept=$(sed -n 's/.*GET \/api\/v1\/pods?.* (Accept: \([^)]*\)).*/\1/p' "$ALOG" | head -n 1)
check "the pod watch asks for metadata alone" eval '[[ "$accept" == *"as=PartialObjectMetadataList"* ]]'
meta=$(curl -s --cacert "$GS_CLUSTER_CA" -H "Authorization: Bearer $sat" -H "Accept: $accept" \
	"$GS_APISERVER_URL/api/v1/pods?fieldSelector=spec.nodeName=$node")
check "that answer names the pod and holds no spec, no env" eval \
	'echo "$meta" | jq -e ".items | length == 1 and .[0].metadata.name == \"envpod\" and (.[0] | has(\"spec\") | not)" >/dev/null &&
	! echo "$meta" | grep -q s3cr3t-value || { echo "$meta" | head -c 600; false; }'
kc delete pod envpod --grace-period=0 --force >/dev/null 2>&1
agent_stop
check "SIGTERM: exit 0" equals 0 echo "$AGENT_RC"

# ---- an unreadable annotation is replaced -----------------------------------------------------------
set_ann 'v9 something else'
agent_start 3 --heartbeat-s 60
check_eventually "an unreadable annotation is replaced" 10 error_line
check "and the agent said so" grep -q "is unreadable (line 1: .*): replaced" "$ALOG"
agent_stop
check "SIGTERM: exit 0" equals 0 echo "$AGENT_RC"
# ---- MIG: the instances NVML gives (a stand-in library here: no driver), by parent index -----------------
# GPU-bbbbbbbb (index 1) has two instances and an empty slot; GPU-zzzzzzzz is no GPU of the driver's
# /proc list: its instance is left out. The first agent found no NVML: no mig line, one log line.
if ! ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1; then
	check "without NVML (none on this machine) no mig line was published, and the agent said so once" eval \
		'[ "$(grep -c "no NVML (" "$work/agent-1.log")" = 1 ]'
fi
export GS_FAKE_NVML="GPU-aaaaaaaa;GPU-bbbbbbbb=MIG-b2,,MIG-b1;GPU-zzzzzzzz=MIG-z1"
agent_start 4 --heartbeat-s 60 --nvml-library "$GS_BUILD_DIR/tests/libfake-nvml.so"
unset GS_FAKE_NVML
check_eventually "the MIG instances of the table's GPUs, sorted, with their parent's index" 10 eval \
	'ann | sed -n 3p | grep -qx "mig MIG-b1=1 MIG-b2=1"'
check "... after the index line, before the error line" eval \
	'ann | sed -n 2p | grep -qx "index 0=GPU-aaaaaaaa 1=GPU-bbbbbbbb" && ann | sed -n 4p | grep -q "^error "'
agent_stop
check "SIGTERM: exit 0" equals 0 echo "$AGENT_RC"
check "no agent log has a sanitizer report" eval '! grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$work"/agent-*.log'
test_end
