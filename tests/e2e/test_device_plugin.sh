#!/usr/bin/env bash
# End to end with the test device plugin (cluster.sh up with GS_NODE_MODE=kubelet GS_DEVICE_PLUGIN=1;
# skipped otherwise): every kubelet has nvidia.com/gpu from the plugin, a default-scheduler pod that
# requests one GPU gets a device (NVIDIA_VISIBLE_DEVICES in its container's environment, one of its
# node's GPU-<uuid> IDs), and the kubelet's PodResources socket lists that device for that pod, as
# `gpu-scheduler agent --once --print` (the C gRPC client and decoder) reads it. Then that node's
# kubelet is stopped and started again (cluster.sh stop-kubelet/start-kubelet): a polling agent logs
# the outage once and keeps running, the plugin registers again, and the list still names the device.
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

sock=$GS_CLUSTER_DIR/nodes/$node/kubelet/pod-resources/kubelet.sock
listed() { "$GS_DAEMON_BIN" agent --once --print --socket "$sock" | grep -qx "$NS/$POD main nvidia.com/gpu $dev"; }
check_eventually "the kubelet's PodResources List names it: gpu-scheduler agent --once --print" 30 listed
"$GS_DAEMON_BIN" agent --once --print --socket "$sock" | sed 's/^/  agent: /'
other=${R[1]}
[ "$other" = "$node" ] && other=${R[2]}
check "another node's PodResources List does not" eval \
	'! "$GS_DAEMON_BIN" agent --once --print --socket "$GS_CLUSTER_DIR/nodes/$other/kubelet/pod-resources/kubelet.sock" | grep -q "$POD"'
# ---- the kubelet restarts -------------------------------------------------------------------------
n=$(basename "$(readlink -f "$GS_CLUSTER_DIR/nodes/$node")")
n=${n#node}
alog=$(test_workdir)/agent.log
"$GS_DAEMON_BIN" agent --print --interval-ms 300 --socket "$sock" >"$alog" 2>&1 &
apid=$!
defer "kill $apid 2>/dev/null; wait $apid 2>/dev/null"
plog=$GS_CLUSTER_DIR/logs/device-plugin-node$n.log
check_eventually "a polling gpu-scheduler agent lists the device" 10 grep -q "^$NS/$POD main nvidia.com/gpu $dev\$" "$alog"
check "node$n's kubelet stopped" "$GS_ROOT/tests/cluster/cluster.sh" stop-kubelet "$n"
check_eventually "the agent logs the outage (the socket's listener is gone)" 20 grep -q "agent: .*retrying every 300 ms" "$alog"
check "node$n's kubelet started again" "$GS_ROOT/tests/cluster/cluster.sh" start-kubelet "$n"
check_eventually "the device plugin saw its socket deleted and registered again" 30 \
	eval '[ "$(grep -c "registered nvidia.com/gpu on $node" "$plog")" -ge 2 ] && grep -q "socket gone" "$plog"'
check_eventually "$node reports nvidia.com/gpu 4 again" 30 equals 4 node_field "$node" '{.status.allocatable.nvidia\.com/gpu}'
check_eventually "the agent is answered again" 30 grep -q "agent: .*answering again" "$alog"
check "the agent kept running through the restart, and logged the outage once" eval \
	'kill -0 $apid && [ "$(grep -c "retrying every" "$alog")" = 1 ]'
check "after the restart the kubelet still lists the device for the pod" listed
sed 's/^/  agent log: /' "$alog" | head -8

check "gpu-scheduler agent --once on a missing socket fails with a clear error" eval \
	'out=$("$GS_DAEMON_BIN" agent --once --socket "$GS_CLUSTER_DIR/nodes/none.sock" 2>&1); rc=$?;
	 [ $rc = 1 ] && printf "%s\n" "$out" | grep -q "the socket does not exist"'
test_end
