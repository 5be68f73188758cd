#!/usr/bin/env bash
# Checks that an example StatefulSet (deploy/examples/gpu-scheduler-check.yaml, or with --name
# gpu-scheduler-check-byref deploy/examples/check-statefulset-by-reference.yaml) is placed as its map
# says, reading the map from the cluster: the StatefulSet's gpu-scheduling-map annotation, or, when its
# pod template names a GPUPlacementMap (gpu-scheduler.io/placement-map), that object's spec.map. For
# every entry INDEX=NODE:DEVICES, pod NAME-INDEX must run on NODE and carry
# CUDA_VISIBLE_DEVICES=DEVICES; by reference it must also carry the object's generation the webhook
# used (gpu-scheduler.io/placement-map-generation). NODE resolves as the scheduler resolves it
# (docs/sched.md, "Node aliases"): the node of that name, otherwise the one node whose
# gpu-scheduler.io/node label has that value. One line per pod; exits 1 if any is not.
#
#   deploy/examples/verify.sh [-n NAMESPACE] [--name STATEFULSET] [--show NODE,...]
#
# --name: the StatefulSet (default gpu-scheduler-check); its pods carry app.kubernetes.io/name=NAME.
# --show first prints `kubectl get pod -o wide -A` and the last lines of the logs of the check pods on
# the given map nodes (what `make demo` and `make kind-demo` print; up to 30 s for a pod's second line,
# so its loop shows). KUBECTL is the command to use
# (default kubectl; e.g. KUBECTL="kubectl --context kind-gpu-scheduler"). Used by scripts/demo.sh,
# deploy/kind/demo.sh and tests/e2e/test_nodes.sh.
set -euo pipefail

KUBECTL=${KUBECTL:-kubectl}
NAME=gpu-scheduler-check
LABEL=gpu-scheduler.io/node
ns=
show=
while [ $# -gt 0 ]; do
	case $1 in
	-n) ns=${2:?-n needs a namespace}; shift 2 ;;
	--name) NAME=${2:?--name needs a StatefulSet}; shift 2 ;;
	--show) show=${2:?--show needs map nodes, e.g. node3,node4}; shift 2 ;;
	*) echo "usage: $0 [-n NAMESPACE] [--name STATEFULSET] [--show NODE,...]" >&2; exit 2 ;;
	esac
done
k() { $KUBECTL ${ns:+-n "$ns"} "$@"; }

# The real node a map name means, or nothing (with the reason on stderr).
node_for() {
	if $KUBECTL get node "$1" -o name >/dev/null 2>&1; then
		echo "$1"
		return
	fi
	local nodes
	nodes=$($KUBECTL get nodes -l "$LABEL=$1" -o jsonpath='{.items[*].metadata.name}')
	case $nodes in
	'') echo "no node is named $1 or carries $LABEL=$1" >&2 ;;
	*' '*) echo "several nodes carry $LABEL=$1 ($nodes): the scheduler binds to none of them" >&2 ;;
	*) echo "$nodes" ;;
	esac
}

map=$(k get statefulset "$NAME" -o jsonpath='{.spec.template.metadata.annotations.gpu-scheduling-map}')
ref=$(k get statefulset "$NAME" -o jsonpath='{.spec.template.metadata.annotations.gpu-scheduler\.io/placement-map}')
gen='' byref=''
if [ -z "$map" ] && [ -n "$ref" ]; then
	byref=1
	map=$(k get gpuplacementmap "$ref" -o jsonpath='{.spec.map}') ||
		{ echo "verify: statefulset $NAME names GPUPlacementMap $ref${ns:+ in $ns}, which cannot be read" >&2; exit 1; }
	gen=$(k get gpuplacementmap "$ref" -o jsonpath='{.metadata.generation}')
fi
[ -n "$map" ] || { echo "verify: statefulset $NAME${ns:+ in $ns} has no gpu-scheduling-map and names no GPUPlacementMap with a map" >&2; exit 1; }

if [ -n "$show" ]; then
	printf '\n== kubectl get pod -o wide -A\n'
	$KUBECTL get pod -o wide -A
	for alias in ${show//,/ }; do
		node=$(node_for "$alias")
		[ -n "$node" ] || continue
		for pod in $(k get pod -l "app.kubernetes.io/name=$NAME" --field-selector "spec.nodeName=$node" \
				-o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort); do
			printf '\n== kubectl%s logs %s --tail=3   (on %s: node %s)\n' "${ns:+ -n $ns}" "$pod" "$alias" "$node"
			for _ in $(seq 1 30); do
				[ "$(k logs "$pod" 2>/dev/null | wc -l)" -ge 2 ] && break
				sleep 1
			done
			k logs "$pod" --tail=3 || true
		done
	done
	printf '\n== placement\n'
fi

fail=0 n=0
while IFS= read -r line; do
	line=${line%%#*}
	line=${line//[[:space:]]/}
	[ -n "$line" ] || continue
	i=${line%%=*} rest=${line#*=}
	alias=${rest%%:*} want_dev=${rest#*:}
	pod=$NAME-$i
	n=$((n + 1))
	want_node=$(node_for "$alias" 2>&1) || true
	node=$(k get pod "$pod" -o jsonpath='{.spec.nodeName}' 2>/dev/null || true)
	dev=$(k get pod "$pod" -o jsonpath='{.spec.containers[0].env[?(@.name=="CUDA_VISIBLE_DEVICES")].value}' \
		2>/dev/null || true)
	# By reference: the object's generation the webhook used (an edit of another entry leaves a pod
	# placed under an older one: that is fine, a pod without any is not).
	pod_gen='' of=''
	if [ -n "$byref" ]; then
		pod_gen=$(k get pod "$pod" -o jsonpath='{.metadata.annotations.gpu-scheduler\.io/placement-map-generation}' \
			2>/dev/null || true)
		of=" (GPUPlacementMap $ref generation ${pod_gen:-unset})"
		[ "$pod_gen" = "$gen" ] || of="${of%)}; the object's is now $gen)"
	fi
	if [ -n "$node" ] && [ "$node" = "$want_node" ] && [ "$dev" = "$want_dev" ] && { [ -z "$of" ] || [ -n "$pod_gen" ]; }; then
		printf 'ok    %s on %s (node %s) with CUDA_VISIBLE_DEVICES=%s%s\n' "$pod" "$alias" "$node" "$dev" "$of"
	else
		printf 'FAIL  %s on %s with CUDA_VISIBLE_DEVICES=%s%s; the map says %s (%s) with %s\n' "$pod" \
			"${node:-no node}" "${dev:-unset}" "$of" "$alias" "$want_node" "$want_dev"
		fail=1
	fi
done <<<"$map"
[ "$n" -gt 0 ] || { echo "verify: the map of $NAME${byref:+ (GPUPlacementMap $ref)} has no entry" >&2; exit 1; }
[ "$fail" = 0 ] || { echo "verify: some pods are not where the map puts them" >&2; exit 1; }
echo "verify: all $n pods placed as mapped"
