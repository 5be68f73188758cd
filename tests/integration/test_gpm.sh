#!/usr/bin/env bash
# GPUPlacementMaps (maps as objects, docs/deploy.md "GPUPlacementMaps") against the real apiserver:
#   - the daemon started without the CRD: ready, says once that the resource is not served, binds a pod
#     with an inline map as ever
#   - the CRD from deploy/crd/ installs; the schema refuses a placement outside its enum, an object
#     without spec.map, a gangSize of 0; `kubectl get gpuplacementmaps` shows the printer columns
#   - deploy/rbac.yaml's ClusterRole lets the scheduler's ServiceAccount list and watch the objects and
#     update/patch their status, and nothing more on them (kubectl auth can-i --as); the daemon runs with
#     that ServiceAccount's token throughout
#   - the daemon picks the objects up once the CRD is installed (it asks again every 30 s), writes their
#     status (entries, observedGeneration, the Ready condition), follows a new generation, a map that
#     does not parse (Ready False, MapInvalid) and a deletion (gpu_scheduler_placement_maps back to 0)
#   - once the engine resolves references (GS_WAIT_MAP_MISSING in src/sched/sched.h): pods naming an
#     object by annotation are bound where it maps them; a pod naming a missing object waits and binds
#     once the object is created; the object's status counts entries/placed/waiting exactly
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

CRD=gpuplacementmaps.gpu-scheduler.io
N=gs-gpm-$(printf '%04x' $RANDOM)
work=$(test_workdir)
crd_gone() { ! NS= kc get crd "$CRD" >/dev/null 2>&1; }
NS= kc delete crd "$CRD" --ignore-not-found --wait=true >/dev/null 2>&1
check_eventually "no GPUPlacementMap CRD to begin with" 60 crd_gone
defer "NS= kc delete crd $CRD --ignore-not-found --wait=false >/dev/null 2>&1"
defer "node_delete $N-a; node_delete $N-b"
node_make "$N-a"
node_make "$N-b"

# The daemon as the scheduler's ServiceAccount would run it: deploy/rbac.yaml's ClusterRole, bound to
# a ServiceAccount of this namespace.
sa_role_kubeconfig "$GS_ROOT/deploy/rbac.yaml" gpu-scheduler sched "$work/sa.kubeconfig"
SA=system:serviceaccount:$NS:sched
KUBECONFIG_SAVED=$KUBECONFIG
KUBECONFIG=$work/sa.kubeconfig daemon_start --require-env=false || exit 1
KUBECONFIG=$KUBECONFIG_SAVED
check "daemon ready without the CRD" daemon_ready 30
not_served() { grep -c 'gpuplacementmaps: not served by the apiserver (404' "$DAEMON_LOG"; }
check_eventually "it says the resource is not served" 10 eval '[ "$(not_served)" -ge 1 ]'
ours inline-0 "0=$N-a:0" >/dev/null
check_eventually "a pod with an inline map is bound as ever" 20 pod_on inline-0 "$N-a"
check "no GPUPlacementMap held" equals 0 metric gpu_scheduler_placement_maps

# --- the CRD ---------------------------------------------------------------------------------------------
check "the CRD from deploy/crd/ applies" eval 'NS= kc apply -f "$GS_ROOT/deploy/crd/gpuplacementmaps.yaml" >/dev/null'
check "it is established" eval 'NS= kc wait --for condition=established --timeout=30s crd/$CRD >/dev/null'
# (kubectl auth can-i resolves the resource through discovery: after the CRD.)
can() { kc auth can-i "$@" --as "$SA" 2>/dev/null; }
check "the ServiceAccount may list and watch gpuplacementmaps in every namespace" eval \
	'[ "$(NS= can list gpuplacementmaps.gpu-scheduler.io --all-namespaces)" = yes ] &&
	 [ "$(NS= can watch gpuplacementmaps.gpu-scheduler.io --all-namespaces)" = yes ]'
check "the ServiceAccount may update and patch their status" eval \
	'[ "$(can update gpuplacementmaps.gpu-scheduler.io --subresource=status)" = yes ] &&
	 [ "$(can patch gpuplacementmaps.gpu-scheduler.io --subresource=status)" = yes ]'
check "the ServiceAccount may not create, update, patch or delete the objects themselves" eval \
	'for v in create update patch delete; do [ "$(can $v gpuplacementmaps.gpu-scheduler.io)" = no ] || exit 1; done'

gpm() { # NAME MAP [SPEC_LINES]: a GPUPlacementMap; prints kubectl's output
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
refused() { # WHAT REGEX YAML: the apiserver refuses it, naming REGEX (kubectl's own validation off)
	local out
	out=$(kc create --validate=false -f - 2>&1 <<<"$3") && { echo "accepted: $out"; return 1; }
	grep -qE "$2" <<<"$out" || { echo "$out"; return 1; }
}
hdr='apiVersion: gpu-scheduler.io/v1alpha1
kind: GPUPlacementMap
metadata:
  name: bad'
check "the schema refuses a placement outside its enum" refused enum 'spec.placement' \
	"$hdr"$'\nspec:\n  map: "0=n:0"\n  placement: sometimes'
check "the schema refuses an object without spec.map" refused map 'spec.map' "$hdr"$'\nspec:\n  placement: independent'
check "the schema refuses gangSize 0" refused gangSize 'spec.gangSize' "$hdr"$'\nspec:\n  map: "0=n:0"\n  gangSize: 0'
check "a valid object is accepted" eval 'gpm ranks "0=$N-a:0\n1=$N-a:1\n2=$N-b:0" "  placement: independent" >/dev/null'

status_of() { kc get gpuplacementmap "$1" -o jsonpath="{.status.$2}" 2>/dev/null; }
ready_of() { kc get gpuplacementmap "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}' 2>/dev/null; }

# --- picked up (the daemon asks again every 30 s), its status written -------------------------------------
check_eventually "the daemon picks the object up once the CRD is installed" 45 \
	eval '[ "$(metric gpu_scheduler_placement_maps)" = 1 ]'
check "it said so once, not at every retry" equals 1 not_served
check_eventually "its status is written: 3 entries" 10 eval '[ "$(status_of ranks entries)" = 3 ]'
check "observedGeneration 1" equals 1 status_of ranks observedGeneration
check "Ready is False (no pod placed yet)" eval '[ "$(ready_of ranks | cut -d" " -f1)" = False ]'
check "a status write counted ok" eval '[ "$(metric "gpu_scheduler_gpm_status_writes_total{result=\"ok\"}")" -ge 1 ]'
check "kubectl get gpuplacementmaps shows the printer columns" eval \
	'out=$(kc get gpuplacementmaps) && head -n1 <<<"$out" | grep -qE "^NAME +ENTRIES +PLACED +WAITING +TOP-REASON +AGE" &&
	 grep -qE "^ranks +3 +0 +0 " <<<"$out" || { echo "$out"; false; }'
check "kubectl get gpm (the short name) too" eval 'kc get gpm ranks >/dev/null'

gpm ranks "0=$N-a:0\n1=$N-a:1" "  placement: independent" >/dev/null
check_eventually "a new generation: 2 entries, observedGeneration 2" 10 \
	eval '[ "$(status_of ranks entries)" = 2 ] && [ "$(status_of ranks observedGeneration)" = 2 ]'
gpm broken "this is not a map" >/dev/null
check_eventually "a map that does not parse: Ready False, MapInvalid" 10 equals "False MapInvalid" ready_of broken
check "two objects held" equals 2 metric gpu_scheduler_placement_maps
kc delete gpuplacementmap broken >/dev/null
check_eventually "a deleted object is let go" 10 eval '[ "$(metric gpu_scheduler_placement_maps)" = 1 ]'

# --- pods by reference ----------------------------------------------------------------------------------
ref() { # POD OBJECT DEVICES: a bare pod naming OBJECT, with the CUDA_VISIBLE_DEVICES the webhook would set
	POD_ANNOTATIONS="    gpu-scheduler.io/placement-map: $2" POD_ENV=$3 pod_yaml "$1" | kc apply -f - >/dev/null
}
if grep -q GS_WAIT_MAP_MISSING "$GS_ROOT/src/sched/sched.h"; then
	gpm w "0=$N-a:2\n1=$N-b:1\n2=$N-gone:0" >/dev/null
	ref w-0 w 2
	ref w-1 w 1
	ref w-2 w 0
	check_eventually "w-0 bound where the object maps index 0" 20 pod_on w-0 "$N-a"
	check_eventually "w-1 bound where the object maps index 1" 20 pod_on w-1 "$N-b"
	check_eventually "its status: 3 entries, 2 placed, 1 waiting" 10 \
		eval '[ "$(status_of w entries)/$(status_of w placed)/$(status_of w waiting)" = 3/2/1 ]'
	check "topReason NODE_MISSING, oldestWaiting index 2 (w-2)" eval \
		'[ "$(status_of w topReason)" = NODE_MISSING ] && [ "$(status_of w oldestWaiting.index)" = 2 ] &&
		 [ "$(status_of w oldestWaiting.pod)" = w-2 ]'
	ref late-0 late 3
	check_eventually "a pod naming a missing object waits (MAP_MISSING)" 20 \
		pod_event_has late-0 'FailedScheduling: .*GPUPlacementMap [^ ]*/late .*does not exist'
	check "and is not bound" equals "" pod_node late-0
	gpm late "0=$N-b:3" >/dev/null
	check_eventually "it binds once the object is created" 20 pod_on late-0 "$N-b"
	check_eventually "the object's status: 1 entry, 1 placed, 0 waiting, Ready True" 10 \
		eval '[ "$(status_of late entries)/$(status_of late placed)/$(status_of late waiting)" = 1/1/0 ] &&
		      [ "$(ready_of late | cut -d" " -f1)" = True ]'
	# A restart: the maps are listed before the pods, so the pods bound by reference are judged by
	# their objects (their claims trusted, counted placed), not re-placed.
	check "no status write failed" equals 0 metric 'gpu_scheduler_gpm_status_writes_total{result="failed"}'
	daemon_stop
	KUBECONFIG=$work/sa.kubeconfig daemon_start --require-env=false || exit 1
	KUBECONFIG=$KUBECONFIG_SAVED
	check "restarted: ready" daemon_ready 30
	check "the maps were listed before the pods" eval \
		'[ "$(grep -n "gpuplacementmaps: listed" "$DAEMON_LOG" | head -n1 | cut -d: -f1)" -lt \
		   "$(grep -n "pods: listed" "$DAEMON_LOG" | head -n1 | cut -d: -f1)" ]'
	check "restarted: 3 objects held" equals 3 metric gpu_scheduler_placement_maps
	check "restarted: no claim of a pod bound by reference ignored" equals 0 metric gpu_scheduler_ignored_claims_total
	check "restarted: nothing bound again" equals 0 metric 'gpu_scheduler_binding_attempts_total{result="success"}'
	check_eventually "restarted: each object's status written again" 10 \
		eval '[ "$(metric "gpu_scheduler_gpm_status_writes_total{result=\"ok\"}")" -ge 3 ]'
	check "restarted: w's status still 2 placed, 1 waiting" eval \
		'[ "$(status_of w placed)/$(status_of w waiting)" = 2/1 ]'
else
	echo "  the engine does not resolve references yet (no GS_WAIT_MAP_MISSING): pods by reference not tested"
fi

check "no status write failed" equals 0 metric 'gpu_scheduler_gpm_status_writes_total{result="failed"}'
daemon_stop
test_end
