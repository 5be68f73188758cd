#!/usr/bin/env bash
# End to end with the test device plugin (cluster.sh up with GS_NODE_MODE=kubelet GS_DEVICE_PLUGIN=1;
# skipped otherwise) and the node agent DaemonSet (deploy/agent, deployed by tests/cluster/deploy.sh
# with each node's own kubelet socket and driver directory): every kubelet has nvidia.com/gpu from the
# plugin; a default-scheduler pod that requests one GPU gets a device (NVIDIA_VISIBLE_DEVICES, one of
# its node's GPU-<uuid> IDs) and, within seconds, its node's annotation gpu-scheduler.io/devices-in-use
# names the pod and the device, with the GPU index table in bus order. Then that node's kubelet is
# stopped and started again (cluster.sh stop-kubelet/start-kubelet): the agent pod keeps running
# (restartCount 0), the annotation carries the error line while the kubelet is down, and no snapshot
# of it taken every half second ever lacks the still-running pod's device without the error line
# (the settle period covers the restarted kubelet's empty first answers). Deleted, the pod leaves the
# annotation. The agent's cost (CPU, RSS, writes) is printed for docs/performance.md.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin
if [ "${GS_DEVICE_PLUGIN:-0}" != 1 ]; then
	echo "  skipped: the cluster runs without the device plugin (cluster.sh up had GS_DEVICE_PLUGIN=0)"
	test_end
fi

R=()
for i in 1 2 3 4; do R[i]=$(node_real "node$i"); done
node_field() { NS='' kc get node "$1" -o jsonpath="$2"; }
for i in 1 2 3 4; do
	check "node$i (${R[i]}): nvidia.com/gpu capacity and allocatable 4, from the device plugin" eval \
		'equals 4 node_field "${R[i]}" "{.status.capacity.nvidia\.com/gpu}" &&
		 equals 4 node_field "${R[i]}" "{.status.allocatable.nvidia\.com/gpu}"'
done

# ---- the agent, as deploy/ ships it (the scheduler too, if no earlier test deployed it) --------------
if ! NS=kube-system kc get daemonset gpu-scheduler-agent >/dev/null 2>&1; then
	check "gpu-scheduler and its node agent deployed through $DEPLOYED_FROM" deploy_scheduler
fi
agent_pod() { # agent_pod NODE: the agent pod on NODE
	NS=kube-system kc get pods -l app.kubernetes.io/name=gpu-scheduler-agent --field-selector "spec.nodeName=$1" \
		-o jsonpath='{.items[0].metadata.name}'
}
agents_ready() {
	local i p
	for i in 1 2 3 4; do
		p=$(agent_pod "${R[i]}") && [ -n "$p" ] &&
			[ "$(NS=kube-system kc get pod "$p" -o jsonpath='{.status.containerStatuses[0].ready}')" = true ] || return 1
	done
}
check_eventually "an agent pod Ready on each of the four nodes" 120 agents_ready
ANN_PATH='{.metadata.annotations.gpu-scheduler\.io/devices-in-use}'
ann() { node_field "$1" "$ANN_PATH"; }
# The index table every node should publish: its GPUs by bus location, as the plugin wrote them.
index_of() {
	local d=$GS_CLUSTER_DIR/nodes/$1/proc-driver/nvidia/gpus i=0 b line="index"
	for b in $(ls "$d" | sort); do
		line+=" $i=$(sed -n 's/^GPU UUID: *//p' "$d/$b/information")"
		i=$((i + 1))
	done
	echo "$line"
}
for i in 1 2 3 4; do
	check_eventually "node$i (${R[i]}): the agent publishes the index table, in bus order" 30 eval \
		'ann "${R[i]}" | grep -qx "$(index_of "${R[i]}")"'
done
plugin_order=$(grep -m1 "registered nvidia.com/gpu on ${R[1]}" "$GS_CLUSTER_DIR/logs/device-plugin-node1.log" | sed 's/.*: //')
check "bus order is not the plugin's order there (the table is not the plugin's list)" eval \
	'[ "$(index_of "${R[1]}" | sed "s/ [0-9]*=/ /g; s/^index //")" != "$plugin_order" ]'
echo "  ${R[1]}: $(ann "${R[1]}" | tr '\n' '|')"

# ---- a default-scheduler pod with one GPU --------------------------------------------------------
POD=gpu-plugin-pod
# The sandbox image every node has imported (tests/cluster/nodes.sh): no image build needed here.
PAUSE_IMAGE=localhost/gs-pause:3.2
check "a default-scheduler pod requesting nvidia.com/gpu: 1 is created" eval 'kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $POD}
spec:
  terminationGracePeriodSeconds: 0
  automountServiceAccountToken: false
  containers:
  - name: main
    image: $PAUSE_IMAGE
    imagePullPolicy: Never
    resources:
      limits: {nvidia.com/gpu: "1", cpu: 50m, memory: 16Mi}
YAML'
running() { [ "$(kc get pod "$POD" -o jsonpath='{.status.phase}')" = Running ]; }
check_eventually "it is Running" 120 running
t_running=$SECONDS
node=$(kc get pod "$POD" -o jsonpath='{.spec.nodeName}')
echo "  on $node"

visible() {
	local pid
	pid=$(container_pid "$NS" "$POD") && [ -n "$pid" ] || return 1
	tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^NVIDIA_VISIBLE_DEVICES=//p'
}
dev=$(visible || true)
echo "  NVIDIA_VISIBLE_DEVICES=$dev"
check "its container has NVIDIA_VISIBLE_DEVICES set by Allocate to one GPU-<uuid>" eval \
	'[[ "$dev" =~ ^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ ]]'
check "the device is one the plugin registered on $node" \
	grep -q "registered nvidia.com/gpu on $node: .*$dev" "$GS_CLUSTER_DIR/logs/device-plugin-$(basename "$(readlink -f "$GS_CLUSTER_DIR/nodes/$node")").log"

sock=$(node_socket "$node" pod-resources/kubelet.sock)
listed() { "$GS_DAEMON_BIN" agent --once --socket "$sock" | grep -qx "$NS/$POD main nvidia.com/gpu $dev"; }
check_eventually "the kubelet's PodResources List names it: gpu-scheduler agent --once" 30 listed
held_line="nvidia.com/gpu $dev $NS/$POD"
published() { ann "$node" | grep -qx "$held_line"; }
check_eventually "within 10 s, $node's annotation names the pod and the device" 10 published
echo "  published $((SECONDS - t_running)) s after Running: $(ann "$node" | tr '\n' '|')"
other=${R[1]}
[ "$other" = "$node" ] && other=${R[2]}
check "another node's annotation does not" eval '! ann "$other" | grep -q "$POD"'

# ---- the kubelet restarts ------------------------------------------------------------------------
n=$(basename "$(readlink -f "$GS_CLUSTER_DIR/nodes/$node")")
n=${n#node}
apod=$(agent_pod "$node")
restarts() { NS=kube-system kc get pod "$apod" -o jsonpath='{.status.containerStatuses[0].restartCount}'; }
# Snapshots of the annotation every 0.5 s, one line each (its lines joined by '|'), through the restart.
snaps=$(test_workdir)/snapshots
( while :; do
	api GET "/api/v1/nodes/$node" 2>/dev/null | jq -r '.metadata.annotations["gpu-scheduler.io/devices-in-use"] // "" | gsub("\n"; "|")'
	sleep 0.5
done ) >"$snaps" 2>/dev/null &
spid=$!
defer "kill $spid 2>/dev/null; wait $spid 2>/dev/null; true"
plog=$GS_CLUSTER_DIR/logs/device-plugin-node$n.log
check "node$n's kubelet stopped" "$GS_ROOT/tests/cluster/cluster.sh" stop-kubelet "$n"
t_stop=$SECONDS
down_line() { ann "$node" | grep -q "^error no data from the kubelet: .*kubelet.sock /v1.PodResourcesLister/List: connect: "; }
check_eventually "while the kubelet is down (over one 10 s interval), the annotation says why" 40 down_line
echo "  after $((SECONDS - t_stop)) s: $(ann "$node" | tr '\n' '|')"
check "node$n's kubelet started again" "$GS_ROOT/tests/cluster/cluster.sh" start-kubelet "$n"
t_start=$SECONDS
check_eventually "the device plugin saw its socket deleted and registered again" 30 \
	eval '[ "$(grep -c "registered nvidia.com/gpu on $node" "$plog")" -ge 2 ] && grep -q "socket gone" "$plog"'
check_eventually "$node reports nvidia.com/gpu 4 again" 30 equals 4 node_field "$node" '{.status.allocatable.nvidia\.com/gpu}'
check_eventually "the annotation names the pod and the device again" 40 published
echo "  published again $((SECONDS - t_start)) s after the kubelet started"
# Past the settle period (30 s) after the kubelet answers again, with two more Lists.
sleep $((t_start + 55 - SECONDS > 0 ? t_start + 55 - SECONDS : 0))
check "past the settle period the device is still published (the kubelet lists it)" published
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
bad=$(grep -v -e '|error ' -e "|$held_line\$" -e "|$held_line|" "$snaps" | grep -c . || true)
check "no snapshot ($(wc -l <"$snaps") over $((SECONDS - t_stop + 1)) s) lacks the device without the error line" \
	eval '[ "$bad" = 0 ] || { grep -v -e "|error " -e "$held_line" "$snaps" | head -3; false; }'
check "the snapshots saw the error line" grep -q '|error ' "$snaps"
check "the agent pod on $node did not restart" equals 0 restarts
NS=kube-system kc logs "$apod" | grep -v ' debug ' | sed 's/^/  agent log: /' | tail -8
check "it logged the outage once, then answering again with the settle period" eval \
	'[ "$(NS=kube-system kc logs "$apod" | grep -c "retrying every")" = 1 ] &&
	 NS=kube-system kc logs "$apod" | grep -q "answering again .*publishing what was published too for 30 s"'

# ---- the pod ends --------------------------------------------------------------------------------
kc delete pod "$POD" --wait=false >/dev/null
t_del=$SECONDS
check_eventually "deleted, the pod leaves $node's annotation" 30 eval '! ann "$node" | grep -q "$POD"'
echo "  gone from the annotation $((SECONDS - t_del)) s after the delete"

# ---- cost, for docs/performance.md: each agent's CPU and RSS from /proc, its writes from /metrics ----
agent_metric() {
	api GET "/api/v1/namespaces/kube-system/pods/$1:10262/proxy/metrics" 2>/dev/null |
		awk -v k="$2" '$1 == k { print $2 }'
}
for i in 1 2 3 4; do
	p=$(agent_pod "${R[i]}")
	pid=$(container_pid kube-system "$p")
	[ -n "$pid" ] || continue
	read -r ut st start < <(awk '{ print $14, $15, $22 }' "/proc/$pid/stat")
	hz=$(getconf CLK_TCK)
	up=$(awk -v s="$start" -v hz="$hz" '{ printf "%d", $1 - s / hz }' /proc/uptime)
	echo "  cost ${R[i]}: cpu $(((ut + st) * 1000 / hz)) ms over ${up} s, rss $(awk '/VmRSS/ { print $2 " " $3 }' "/proc/$pid/status")," \
		"publishes $(agent_metric "$p" 'gpu_scheduler_agent_publishes_total{result="success"}'), lists $(agent_metric "$p" 'gpu_scheduler_agent_lists_total{result="success"}')"
done

check "gpu-scheduler agent --once on a missing socket fails with a clear error" eval \
	'out=$("$GS_DAEMON_BIN" agent --once --socket "$(node_socket "$node" none.sock)" 2>&1); rc=$?;
	 [ $rc = 1 ] && printf "%s\n" "$out" | grep -q "the socket does not exist"'
test_end
