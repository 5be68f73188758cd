#!/usr/bin/env bash
# End to end with GPUs the device plugin shares (issue 34; docs/agent.md, "Shared GPUs"): a second
# instance of the test device plugin shares node4's four GPUs as NVIDIA's does with time-slicing and
# renameByDefault: nvidia.com/gpu.shared, four replicas of each GPU named GPU-<uuid>::<n>, 16 advertised.
#   - a default-scheduler pod asking one replica gets GPU-<uuid>::<k>; the agent publishes it; a mapped
#     pod on that GPU (by index, through the agent's table) waits naming the replica and the pod, and
#     runs once the pod is gone;
#   - the node's GPUs stay its four physical ones: a pod mapped to GPU 7 is refused by the webhook, the
#     agent's index table saying so.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin
needs_device_plugin

check "gpu-scheduler and its agent deployed ($DEPLOYED_FROM, self-signed certificate)" deploy_scheduler
node_names
N=${R[4]}
ann() { NS='' kc get node "$N" -o jsonpath='{.metadata.annotations.gpu-scheduler\.io/devices-in-use}'; }
shared() { NS='' kc get node "$N" -o jsonpath='{.status.allocatable.nvidia\.com/gpu\.shared}'; }
check_eventually "the agent on $N publishes its data, with the index table" 90 eval 'ann | grep -q "^index 0=GPU-"'

DP=$("$GS_ROOT/tests/cluster/build-device-plugin.sh" 2>/dev/null)
check "the test device plugin is built" test -x "$DP"
"$DP" --plugin-dir "$(node_socket node4 device-plugins)" --node "$N" --count 4 --replicas 4 \
	--resource nvidia.com/gpu.shared >"$GS_CLUSTER_DIR/logs/device-plugin-shared-node4.log" 2>&1 &
DP_PID=$!
defer "kill $DP_PID 2>/dev/null; wait $DP_PID 2>/dev/null"
check_eventually "$N advertises nvidia.com/gpu.shared: 16 (4 GPUs, 4 replicas each)" 60 equals 16 shared

plugin_pod slice-0 "$N" nvidia.com/gpu.shared
check_eventually "slice-0 runs on $N with a replica from the device plugin" 90 running_on slice-0 "$N"
check_eventually "the agent publishes slice-0's replica" 30 eval 'ann | grep -q "^nvidia.com/gpu.shared GPU-[^ ]*::[0-3] $NS/slice-0$"'
dev=$(ann | awk -v p="$NS/slice-0" '$3 == p { print $2 }')
gpu=${dev%%::*}
idx=$(ann | sed -n 's/^index //p' | tr ' ' '\n' | awk -F= -v d="$gpu" '$2 == d { print $1 }')
echo "  slice-0 holds $dev, a replica of GPU $idx ($gpu) of $N"
check "its GPU is in the agent's index table" test -n "$idx"
check_pod ts-0 "0=node4:$idx" | kc apply -f - >/dev/null
check_eventually "ts-0 waits naming the replica and slice-0" 60 event_has ts-0 \
	"FailedScheduling: ${W[4]}$N GPU $idx \\($dev\\) is held by $NS/slice-0 through the device plugin"
check "ts-0 unbound" eval '[ "$(phase_node ts-0)" = "Pending " ]'
check "slice-0 deleted" kc delete pod slice-0 --wait=false
check_eventually "ts-0 runs on $N once slice-0 is gone" 90 running_on ts-0 "$N"
check "ts-0 deleted" kc delete pod ts-0 --wait=true --timeout=60s

# The node advertises 16 replicas (and 4 nvidia.com/gpu), but has 4 GPUs: GPU 7 is none of them, and
# the webhook refuses the pod, saying so.
refused() { ! check_pod gpu7-0 "0=node4:7" | kc apply -f - >"$work/gpu7.out" 2>&1 && cat "$work/gpu7.out"; }
work=$(mktemp -d)
defer "rm -rf $work"
check "gpu7-0 (index 0 on GPU 7) refused by the webhook: the agent's index table has 4 GPUs" eval \
	'refused | grep -q "gpu-scheduling-map line 1 for index 0: node \"node4\" has 4 GPUs by its agent.s index table, so it has no device 7"'
check "gpu7-0 not created" eval '! kc get pod gpu7-0 >/dev/null 2>&1'
test_end
