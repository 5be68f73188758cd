#!/usr/bin/env bash
# End to end on real nodes (cluster.sh with GS_NODE_MODE=kubelet): gpu-scheduler deployed into
# kube-system from its image through deploy/ (two replicas, one Lease holder), the example StatefulSet
# Running where its map says with the right CUDA_VISIBLE_DEVICES in each pod's log, the same service by
# reference (deploy/examples/check-statefulset-by-reference.yaml: its map in a GPUPlacementMap, whose
# status the leader writes), both images running as 65532 on a read-only root, and the leader's pod
# deleted while check pods are pending: the other replica takes over and binds them.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

# node, then devices, for each index of deploy/examples/gpu-scheduler-check.yaml's map
WANT_MAP=(node1 node2 node3 node4 node4)
WANT_DEVS=(0,1 2 0,1,2 3 3)
CHECK=gpu-scheduler-check

# The map's node1..node4 are the nodes of those names, or, on a cluster whose kubelets are named like
# kind's workers (cluster.sh's GS_NODE_NAMES=gpu-worker,...), the nodes labelled
# gpu-scheduler.io/node=node1..node4 (node aliases): WANT_NODE holds the real names.
R=()
for i in 1 2 3 4; do R[i]=$(node_real "node$i"); done
WANT_NODE=("${R[1]}" "${R[2]}" "${R[3]}" "${R[4]}" "${R[4]}")
echo "  node1..node4 are ${R[*]}"
# How the scheduler's log names node4: "node4", or "node4 (node gpu-worker4)" when resolved by the label.
WHO4=node4
[ "${R[4]}" = node4 ] || WHO4="node4 (node ${R[4]})"

node_field() { NS='' kc get node "$1" -o jsonpath="$2"; }

real_node() {
	equals True node_field "$1" '{.status.conditions[?(@.type=="Ready")].status}' &&
		equals 4 node_field "$1" '{.status.allocatable.nvidia\.com/gpu}' &&
		node_field "$1" '{.status.nodeInfo.containerRuntimeVersion}' | grep -q '^containerd://' &&
		# A kubelet renews its node's Lease: the object is alive, not a Node written by a script.
		[ -n "$(NS=kube-node-lease kc get lease "$1" -o jsonpath='{.spec.renewTime}')" ]
}

for i in 1 2 3 4; do
	check "node$i (${R[i]}) is a Ready kubelet with containerd and nvidia.com/gpu: 4" real_node "${R[i]}"
done

# ---- the scheduler from its image ----------------------------------------------------------------

check "gpu-scheduler deployed into kube-system through $DEPLOYED_FROM (self-signed certificate)" deploy_scheduler

leader_is_running() { sched_pods | grep -qx "$(leader_pod)"; }
check "two replicas Running" eval '[ "$(sched_pods | wc -l)" = 2 ]'
check "on two different nodes (preferred anti-affinity)" eval \
	'[ "$(NS=kube-system kc get pods -l app.kubernetes.io/name=gpu-scheduler -o jsonpath="{range .items[*]}{.spec.nodeName}{\"\n\"}{end}" | sort -u | wc -l)" = 2 ]'
check_eventually "one of them holds the Lease" 30 leader_is_running
check "a PodDisruptionBudget keeps one of them" eval \
	'[ "$(NS=kube-system kc get pdb gpu-scheduler -o jsonpath="{.spec.minAvailable}")" = 1 ]'
sched_pod=$(leader_pod)
echo "  scheduler pods: $(sched_pods | tr '\n' ' ')(leader $sched_pod)"
check "the scheduler runs on one of the nodes" eval \
	'NS=kube-system kc get pod "$sched_pod" -o jsonpath="{.spec.nodeName}" | grep -qxF -e "${R[1]}" -e "${R[2]}" -e "${R[3]}" -e "${R[4]}"'
check "the scheduler reaches the apiserver through in-cluster config (Service kubernetes)" eval \
	'NS=kube-system kc logs "$sched_pod" | grep -q "apiserver https://10\.0\.0\.1:443"'

# runs_restricted NS POD: the container's process has UID and GID 65532 and a read-only root mount.
runs_restricted() {
	local pid
	pid=$(container_pid "$1" "$2")
	[ -n "$pid" ] || { echo "no process for $1/$2"; return 1; }
	awk '/^Uid:/ { for (i = 2; i <= 5; i++) if ($i != 65532) exit 1 }
	     /^Gid:/ { for (i = 2; i <= 5; i++) if ($i != 65532) exit 1 }' "/proc/$pid/status" ||
		{ grep -E '^(Uid|Gid):' "/proc/$pid/status"; return 1; }
	# The last mount on / is the one the process sees; field 6 holds its per-mount options.
	awk '$5 == "/" { opts = $6 } END { split(opts, o, ","); exit o[1] != "ro" }' \
		"/proc/$pid/mountinfo" || { echo "root of $pid is not read-only"; return 1; }
}
check "the gpu-scheduler image runs as 65532 on a read-only root" runs_restricted kube-system "$sched_pod"

# ---- the example StatefulSet --------------------------------------------------------------------

check "the example StatefulSet applies" kc apply -f "$GS_ROOT/deploy/examples/gpu-scheduler-check.yaml"
# The same service with its map in a GPUPlacementMap (issue 24, "maps as objects"), beside it: applied
# now so that its pods start with the first five; checked after them.
BYREF=gpu-scheduler-check-byref
check_eventually "the GPUPlacementMap CRD (deployed with the scheduler) is established" 30 \
	crd_established gpuplacementmaps.gpu-scheduler.io
check "the by-reference example (a GPUPlacementMap and its StatefulSet) applies" \
	kc apply -f "$GS_ROOT/deploy/examples/check-statefulset-by-reference.yaml"

pod_running_on() {
	[ "$(kc get pod "$1" -o jsonpath='{.status.phase} {.spec.nodeName}')" = "Running $2" ]
}

# pod_logs_show POD NODE DEVS: the check service printed its node and devices.
pod_logs_show() {
	kc logs "$1" | grep -q "node=$2 CUDA_VISIBLE_DEVICES=$3 pod=$1\$"
}

check_pods() {
	local i
	for i in "$@"; do
		check_eventually "$CHECK-$i Running on ${WANT_MAP[i]} (${WANT_NODE[i]})" 120 pod_running_on "$CHECK-$i" "${WANT_NODE[i]}"
		check_eventually "$CHECK-$i logs node=${WANT_NODE[i]} CUDA_VISIBLE_DEVICES=${WANT_DEVS[i]}" 30 \
			pod_logs_show "$CHECK-$i" "${WANT_NODE[i]}" "${WANT_DEVS[i]}"
	done
}
check_pods 0 1 2 3 4
# The demos' verdict (deploy/examples/verify.sh, used by make demo and make kind-demo) agrees.
verify() { KUBECTL="$GS_KUBECTL --kubeconfig $KUBECONFIG" "$GS_ROOT/deploy/examples/verify.sh" -n "$NS"; }
check "deploy/examples/verify.sh: all 5 pods placed as mapped" eval 'verify | grep -qx "verify: all 5 pods placed as mapped"'
check "the gpu-scheduler-check image runs as 65532 on a read-only root" runs_restricted "$NS" "$CHECK-0"

# ---- the example by reference: deploy/examples/check-statefulset-by-reference.yaml ---------------
# Each pod where the object's map says, CUDA_VISIBLE_DEVICES from the object's entry in its container
# (the check service's log), the object's generation recorded on the pod, and the leader's status on
# the object: `kubectl get gpuplacementmaps` columns and the Ready condition.

gpm_field() { kc get gpuplacementmap "$BYREF" -o jsonpath="$1"; }
byref_map=$(gpm_field '{.spec.map}')
byref_gen=$(gpm_field '{.metadata.generation}')
byref_n=0
while IFS='=:' read -r i alias devs; do
	[ -n "$i" ] || continue
	byref_n=$((byref_n + 1))
	node=$(node_real "$alias")
	check_eventually "$BYREF-$i Running on $alias ($node), as its GPUPlacementMap says" 120 \
		pod_running_on "$BYREF-$i" "$node"
	check_eventually "$BYREF-$i logs node=$node CUDA_VISIBLE_DEVICES=$devs (the object's entry)" 30 \
		pod_logs_show "$BYREF-$i" "$node" "$devs"
	check "$BYREF-$i carries the object's generation ($byref_gen) in gpu-scheduler.io/placement-map-generation" \
		equals "$byref_gen" kc get pod "$BYREF-$i" \
		-o jsonpath='{.metadata.annotations.gpu-scheduler\.io/placement-map-generation}'
done <<<"$(printf '%s\n' "$byref_map" | tr -d ' \t')"
check "the object's map has the StatefulSet's 5 entries" equals 5 echo "$byref_n"
verify_byref() { verify --name "$BYREF"; }
check "deploy/examples/verify.sh --name $BYREF: all 5 pods placed as the object maps" eval \
	'verify_byref | grep -qx "verify: all 5 pods placed as mapped"'

# `kubectl get gpuplacementmaps`: NAME ENTRIES PLACED WAITING TOP-REASON AGE, and this object's row
# with Entries = Placed = 5 and Waiting 0 (the leader writes at most once a second per object).
gpm_columns_show_placed() {
	local out
	out=$(kc get gpuplacementmaps)
	if printf '%s\n' "$out" | head -n 1 | grep -qE '^NAME +ENTRIES +PLACED +WAITING +TOP-REASON +AGE *$' &&
		printf '%s\n' "$out" | grep -qE "^$BYREF +5 +5 +0 "; then
		return 0
	fi
	printf '%s\n' "$out"
	return 1
}
check_eventually "kubectl get gpuplacementmaps: $BYREF Entries 5, Placed 5, Waiting 0" 30 gpm_columns_show_placed
gpm_ready() {
	equals "True $byref_gen" gpm_field '{.status.conditions[?(@.type=="Ready")].status} {.status.observedGeneration}'
}
check_eventually "its status: Ready True, observedGeneration $byref_gen" 30 gpm_ready
echo "  $(kc get gpuplacementmaps | tr -s ' ' | tr '\n' ';')"

# ---- the leader's pod deleted while check pods are pending ---------------------------------------
# node3 and node4 cordoned, pods 2, 3 and 4 deleted: the StatefulSet recreates them (mutated by the
# webhook) and they wait. The leader's pod is deleted: it hands the Lease over on SIGTERM, the other
# replica (its caches warm) leads, and the Deployment starts a third pod. Uncordoned, the pods must land
# where mapped, bound by the new leader.

defer 'NS="" kc uncordon "${R[3]}" "${R[4]}" >/dev/null 2>&1'
check "node3 and node4 cordoned" eval 'NS="" kc cordon "${R[3]}" "${R[4]}" >/dev/null'
old_uids=$(kc get pods "$CHECK-2" "$CHECK-3" "$CHECK-4" -o jsonpath='{.items[*].metadata.uid}')
check "pods 2, 3, 4 deleted" kc delete pod "$CHECK-2" "$CHECK-3" "$CHECK-4" --wait=false

waiting_for_cordon() {
	local i uid
	for i in 2 3 4; do
		uid=$(kc get pod "$CHECK-$i" -o jsonpath='{.metadata.uid}') || return 1
		case " $old_uids " in *" $uid "*) return 1 ;; esac
		[ -z "$(kc get pod "$CHECK-$i" -o jsonpath='{.spec.nodeName}')" ] || return 1
		kc get pod "$CHECK-$i" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}' |
			grep -q cordoned || return 1
	done
}
check_eventually "pods 2, 3, 4 recreated and pending: their nodes are cordoned" 120 waiting_for_cordon
# (check keeps its own `out` and `rc`: this exit status is verify_rc.)
verdict=$(verify 2>&1) && verify_rc=0 || verify_rc=$?
check "deploy/examples/verify.sh fails while they wait, naming pods 2, 3, 4 and only them" eval \
	'[ "$verify_rc" = 1 ] && [ "$(printf "%s\n" "$verdict" | grep -c "^FAIL  $CHECK-[234] on no node")" = 3 ] &&
	 [ "$(printf "%s\n" "$verdict" | grep -c "^ok    ")" = 2 ] ||
	 { echo "exit $verify_rc:"; printf "%s\n" "$verdict"; false; }'

check "the leader's pod deleted" eval 'NS=kube-system kc delete pod "$sched_pod" --wait=false >/dev/null'
new_leader() {
	local p
	p=$(leader_pod)
	[ -n "$p" ] && [ "$p" != "$sched_pod" ] && sched_pods | grep -qx "$p"
}
check_eventually "the other replica leads" 30 new_leader
check "pods 2, 3, 4 are still pending while node3 and node4 are cordoned" waiting_for_cordon
new_pod=$(leader_pod)
echo "  new leader: $new_pod"
# Its pod list may arrive before its node list: it must not judge the pods until it has both.
check "the new scheduler never reported their nodes missing" eval \
	'! NS=kube-system kc logs "$new_pod" | grep "waits: .*does not exist"'
check "node3 and node4 uncordoned" eval 'NS="" kc uncordon "${R[3]}" "${R[4]}" >/dev/null'
check_pods 2 3 4
check "the new leader bound them" eval \
	'NS=kube-system kc logs "$new_pod" | grep -qF "bound pod $NS/$CHECK-4 to $WHO4 (CUDA_VISIBLE_DEVICES=3"'

test_end
