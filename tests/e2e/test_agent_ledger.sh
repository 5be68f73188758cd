#!/usr/bin/env bash
# End to end with the device plugin and the node agent (deploy/'s agent DaemonSet) on real kubelets: the
# ledger sees the GPUs the kubelet's device manager hands out (docs/agent.md, docs/sched.md "GPUs the
# device plugin gave out").
#   - a default-scheduler pod requesting one GPU gets a device; the agent on its node publishes it;
#     a mapped pod whose entry gives that GPU (by index, through the agent's table) waits naming the pod,
#     and runs once the pod is deleted;
#   - a plugin pod given a GPU a map holds (all four GPUs of the node mapped to a running pod, so any
#     device the plugin picks is a mapped one): DeviceConflict events on both pods.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin
needs_device_plugin

check "gpu-scheduler and its agent deployed ($DEPLOYED_FROM, self-signed certificate)" deploy_scheduler
node_names
N=${R[4]}
ann() { NS='' kc get node "$N" -o jsonpath='{.metadata.annotations.gpu-scheduler\.io/devices-in-use}'; }
check_eventually "the agent on $N publishes its data, with the index table" 90 eval 'ann | grep -q "^index 0=GPU-"'

# --- a device the plugin gave out: named, then free -----------------------------------------------------
plugin_pod plug-0 "$N"
check_eventually "plug-0 runs on $N with a GPU from the device plugin" 90 running_on plug-0 "$N"
check_eventually "the agent publishes plug-0's device" 30 eval 'ann | grep -q " $NS/plug-0$"'
dev=$(ann | awk -v p="$NS/plug-0" '$3 == p { print $2 }')
idx=$(ann | sed -n 's/^index //p' | tr ' ' '\n' | awk -F= -v d="$dev" '$2 == d { print $1 }')
echo "  plug-0 holds $dev, GPU $idx of $N"
check "the device is in the agent's index table" test -n "$idx"
check_pod led-0 "0=node4:$idx" | kc apply -f - >/dev/null
check_eventually "led-0 waits naming plug-0" 60 event_has led-0 \
	"FailedScheduling: ${W[4]}$N GPU $idx \\($dev\\) is held by $NS/plug-0 through the device plugin"
check "led-0 unbound" eval '[ "$(phase_node led-0)" = "Pending " ]'
check "plug-0 deleted" kc delete pod plug-0 --wait=false
check_eventually "led-0 runs on $N once plug-0 is gone" 90 running_on led-0 "$N"
check "led-0 deleted" kc delete pod led-0 --wait=true --timeout=60s

# --- a conflict the map cannot prevent (the node is not dedicated) --------------------------------------
check_pod all-0 "0=node4:0,1,2,3" | kc apply -f - >/dev/null
check_eventually "all-0 runs on $N holding its four GPUs" 90 running_on all-0 "$N"
plugin_pod plug-1 "$N"
check_eventually "plug-1 runs: the kubelet sees no GPU in use (maps do not request nvidia.com/gpu)" 90 running_on plug-1 "$N"
check_eventually "DeviceConflict on the mapped pod" 60 event_has all-0 \
	"DeviceConflict: $N GPU [0-3] \\(GPU-[0-9a-f-]+\\) is given by a gpu-scheduling-map to $NS/all-0 and by the device plugin to $NS/plug-1"
check_eventually "DeviceConflict on the plugin's pod" 30 event_has plug-1 "DeviceConflict: .* to $NS/plug-1"
kc delete pod plug-1 all-0 --wait=false >/dev/null 2>&1
test_end
