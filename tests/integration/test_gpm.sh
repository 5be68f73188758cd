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
#   - pods naming an object by annotation are bound where it maps them; a pod naming a missing object
#     waits and binds once the object is created; the object's status counts entries/placed/waiting
#     exactly; a restart lists the objects before the pods and binds nothing again
#   - a map edit: the devices of a pending pod's entry changed -> it waits NOT_MUTATED naming both
#     generations; an edit of another entry leaves a bound pod alone
#   - the object deleted and re-created: its pending pods wait MAP_MISSING, the bound ones stay; then the
#     pending ones bind and the new object's status is written; a status write carrying the old object's
#     uid (the daemon's JSON patch, its uid test first) is refused with 422 and leaves the new object's
#     status as it was, where a merge patch carrying metadata.uid would land (why the daemon sends none)
#   - 1,000 pods naming one object of 1,000 entries (10 on a missing node): status and `kubectl get gpm`
#     say 1000 entries, 990 placed, 10 waiting, NODE_MISSING, the lowest waiting index
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
POD_ENV=0 ours inline-0 "0=$N-a:0" >/dev/null
check_eventually "a pod with an inline map is bound as ever" 20 pod_on inline-0 "$N-a"
check "no GPUPlacementMap held" equals 0 metric gpu_scheduler_placement_maps

# --- the CRD ---------------------------------------------------------------------------------------------
check "the CRD from deploy/crd/ applies" eval 'NS= kc apply -f "$GS_ROOT/deploy/crd/gpuplacementmaps.yaml" >/dev/null'
check_eventually "it is established" 30 crd_established "$CRD"
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
check "a valid object is accepted" eval 'gpm_apply ranks "0=$N-a:0\n1=$N-a:1\n2=$N-b:0" "  placement: independent" >/dev/null'

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

gpm_apply ranks "0=$N-a:0\n1=$N-a:1" "  placement: independent" >/dev/null
check_eventually "a new generation: 2 entries, observedGeneration 2" 10 \
	eval '[ "$(status_of ranks entries)" = 2 ] && [ "$(status_of ranks observedGeneration)" = 2 ]'
gpm_apply broken "this is not a map" >/dev/null
check_eventually "a map that does not parse: Ready False, MapInvalid" 10 equals "False MapInvalid" ready_of broken
check "two objects held" equals 2 metric gpu_scheduler_placement_maps
kc delete gpuplacementmap broken >/dev/null
check_eventually "a deleted object is let go" 10 eval '[ "$(metric gpu_scheduler_placement_maps)" = 1 ]'

# --- pods by reference ----------------------------------------------------------------------------------
ref() { # POD OBJECT DEVICES [GENERATION]: a bare pod naming OBJECT, with the CUDA_VISIBLE_DEVICES (and
	# the generation annotation) the webhook would set
	local ann="    gpu-scheduler.io/placement-map: $2"
	[ -n "${4:-}" ] && ann+=$'\n'"    gpu-scheduler.io/placement-map-generation: \"$4\""
	POD_ANNOTATIONS=$ann POD_ENV=$3 pod_yaml "$1" | kc apply -f - >/dev/null
}
gpm_apply w "0=$N-a:2\n1=$N-b:1\n2=$N-gone:0" >/dev/null
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
gpm_apply late "0=$N-b:3" >/dev/null
check_eventually "it binds once the object is created" 20 pod_on late-0 "$N-b"
check_eventually "the object's status: 1 entry, 1 placed, 0 waiting, Ready True" 10 \
	eval '[ "$(status_of late entries)/$(status_of late placed)/$(status_of late waiting)" = 1/1/0 ] &&
	      [ "$(ready_of late | cut -d" " -f1)" = True ]'
# A restart: the maps are listed before the pods, so the pods bound by reference are judged by
# their objects (their claims trusted, counted placed), not re-placed. From here on the daemon checks
# CUDA_VISIBLE_DEVICES (--require-env, the default: every pod above carries its entry's) and lets pods
# share devices (the 1,000 pods below reuse the nodes' 4 GPUs; test_node_checks covers the ledger).
check "no status write failed" equals 0 metric 'gpu_scheduler_gpm_status_writes_total{result="failed"}'
daemon_stop
KUBECONFIG=$work/sa.kubeconfig daemon_start --device-sharing=any || exit 1
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

# --- a map edit: the devices of a pending pod's entry, then only another entry ----------------------------
gpm_apply ed "0=$N-a:3\n1=$N-gone:1" >/dev/null
ref ed-0 ed 3 1
ref ed-1 ed 1 1
check_eventually "ed-0 bound where generation 1 maps it" 20 pod_on ed-0 "$N-a"
check_eventually "ed-1 waits: its node does not exist" 20 \
	pod_event_has ed-1 'FailedScheduling: node "[^"]*-gone" named by GPUPlacementMap [^ ]*/ed line 2'
gpm_apply ed "0=$N-a:3\n1=$N-gone:2" >/dev/null
check_eventually "its entry's devices edited: ed-1 (CUDA_VISIBLE_DEVICES=1) waits NOT_MUTATED, naming both generations" 20 \
	pod_event_has ed-1 'FailedScheduling: admitted under generation 1 of GPUPlacementMap [^ ]*/ed; .*the object is now generation 2'
check_eventually "ed's status: NOT_MUTATED, oldestWaiting ed-1" 10 eval \
	'[ "$(status_of ed observedGeneration)/$(status_of ed topReason)/$(status_of ed oldestWaiting.pod)" = 2/NOT_MUTATED/ed-1 ]'
check "ed-1 is not bound" equals "" pod_node ed-1
binds_before=$(metric 'gpu_scheduler_binding_attempts_total{result="success"}')
gpm_apply ed "0=$N-a:3\n1=$N-b:1" >/dev/null
check_eventually "its entry back to its devices on a node that exists: ed-1 bound there" 20 pod_on ed-1 "$N-b"
check "ed-0, bound, untouched by the edits of another entry" pod_on ed-0 "$N-a"
check_eventually "one Binding for the edits: ed-1's" 5 equals $((binds_before + 1)) \
	metric 'gpu_scheduler_binding_attempts_total{result="success"}'
check_eventually "ed's status: generation 3, 2 entries, 2 placed, 0 waiting" 10 eval \
	'[ "$(status_of ed observedGeneration)/$(status_of ed entries)/$(status_of ed placed)/$(status_of ed waiting)" = 3/2/2/0 ]'

# --- delete and re-create the object while some of its pods are pending and others bound ----------------
gpm_apply dr "0=$N-a:0\n1=$N-gone:0\n2=$N-gone:1" >/dev/null
ref dr-0 dr 0 1
ref dr-1 dr 0 1
ref dr-2 dr 1 1
check_eventually "dr-0 bound" 20 pod_on dr-0 "$N-a"
check_eventually "dr's status: 3 entries, 1 placed, 2 waiting" 10 \
	eval '[ "$(status_of dr entries)/$(status_of dr placed)/$(status_of dr waiting)" = 3/1/2 ]'
dr_uid=$(kc get gpuplacementmap dr -o jsonpath='{.metadata.uid}')
kc delete gpuplacementmap dr >/dev/null
missing='FailedScheduling: GPUPlacementMap [^ ]*/dr named by gpu-scheduler.io/placement-map does not exist'
check_eventually "deleted: dr-1 waits MAP_MISSING" 20 pod_event_has dr-1 "$missing"
check_eventually "deleted: dr-2 waits MAP_MISSING" 20 pod_event_has dr-2 "$missing"
check "deleted: dr-0 stays bound" pod_on dr-0 "$N-a"
gpm_apply dr "0=$N-a:0\n1=$N-b:0\n2=$N-b:1" >/dev/null
check "re-created: a new object" eval '[ "$(kc get gpuplacementmap dr -o jsonpath="{.metadata.uid}")" != "$dr_uid" ]'
check_eventually "re-created: dr-1 bound" 20 pod_on dr-1 "$N-b"
check_eventually "re-created: dr-2 bound" 20 pod_on dr-2 "$N-b"
check "re-created: dr-0 still where it was" pod_on dr-0 "$N-a"
check_eventually "re-created: the new object's status written: 3 entries, 3 placed, 0 waiting, Ready True" 10 \
	eval '[ "$(status_of dr observedGeneration)/$(status_of dr entries)/$(status_of dr placed)/$(status_of dr waiting)" = 1/3/3/0 ] &&
	      [ "$(ready_of dr | cut -d" " -f1)" = True ]'
# A write meant for the old object, as the daemon sends it (api.h, gs_api_gpm_status: a JSON patch that
# tests metadata.uid, then replaces the status), arriving now: refused, the new object's status intact.
gpm_status_patch() { # UID: the daemon's patch with that uid and counts no one would write
	printf '[{"op":"test","path":"/metadata/uid","value":"%s"},{"op":"add","path":"/status","value":{"observedGeneration":7,"entries":99,"placed":0,"waiting":99,"reasons":[],"conditions":[{"type":"Ready","status":"False","reason":"Waiting","lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":7,"message":"stale"}]}}]' "$1"
}
dr_status=/apis/gpu-scheduler.io/v1alpha1/namespaces/$NS/gpuplacementmaps/dr/status
stale=$(api_raw PATCH "$dr_status" "$(gpm_status_patch "$dr_uid")" application/json-patch+json)
stale_code=${stale##*$'\n'}
check "re-created: a status write with the old uid is refused (422, the uid test failed)" eval \
	'[ "$stale_code" = 422 ] && grep -q "the server rejected our request due to an error in our request" <<<"$stale" ||
	 { echo "$stale"; false; }'
check "re-created: the new object's status unchanged by it" eval \
	'[ "$(status_of dr observedGeneration)/$(status_of dr entries)/$(status_of dr placed)/$(status_of dr waiting)" = 1/3/3/0 ] &&
	 [ "$(ready_of dr)" = "True Placed" ]'
# Why a JSON patch: a merge patch's metadata.uid is no precondition on a custom resource's status (the
# apiserver copies the stored metadata over it). Shown on an object of its own, deleted and re-created,
# once the daemon wrote the new one's status (which nothing changes afterwards: no pod names it).
scratch_status=/apis/gpu-scheduler.io/v1alpha1/namespaces/$NS/gpuplacementmaps/scratch/status
gpm_apply scratch "0=$N-gone:0" >/dev/null
old_uid=$(kc get gpuplacementmap scratch -o jsonpath='{.metadata.uid}')
kc delete gpuplacementmap scratch >/dev/null
gpm_apply scratch "0=$N-gone:0" >/dev/null
new_uid=$(kc get gpuplacementmap scratch -o jsonpath='{.metadata.uid}')
check_eventually "scratch re-created: its status written by the daemon" 10 eval '[ "$(status_of scratch entries)" = 1 ]'
check "a merge patch with the old uid lands on the re-created object (why the daemon does not send one)" eval \
	'api PATCH "$scratch_status" "{\"metadata\":{\"uid\":\"$old_uid\"},\"status\":{\"entries\":99}}" \
	   application/merge-patch+json >/dev/null && [ "$(status_of scratch entries)" = 99 ]'
check "the daemon's patch with the object's own uid is applied" eval \
	'api PATCH "$scratch_status" "$(gpm_status_patch "$new_uid")" application/json-patch+json >/dev/null &&
	 [ "$(status_of scratch observedGeneration)/$(status_of scratch waiting)" = 7/99 ]'
kc delete gpuplacementmap scratch >/dev/null

# --- 1,000 pods by reference: the status counts exact ------------------------------------------------------
# One object of 1,000 entries over three nodes with room for 400 pods each; the entries i = 37 mod 100
# name a node that does not exist (10 of them, the lowest 37). The pods are POSTed by curl, 8 streams
# at a time (kubectl creates one at a time: several times slower), and deleted by one deletecollection.
big_nodes=("$N-c" "$N-d" "$N-e")
defer "node_delete $N-c; node_delete $N-d; node_delete $N-e"
for n in "${big_nodes[@]}"; do
	node_make "$n"
	api PATCH "/api/v1/nodes/$n/status" '{"status":{"capacity":{"pods":"400"},"allocatable":{"pods":"400"}}}' \
		application/merge-patch+json >/dev/null
done
mkdir -p "$work/big"
: >"$work/big.map"
: >"$work/big.want"
: >"$work/big.curl"
for i in $(seq 0 999); do
	if [ $((i % 100)) = 37 ]; then node=$N-gone; else node=${big_nodes[i % 3]}; fi
	echo "$i=$node:$((i % 4))" >>"$work/big.map"
	[ "$node" = "$N-gone" ] && node=
	echo "big-$i $node" >>"$work/big.want"
	printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"big-%d","labels":{"app":"big"},"annotations":{"gpu-scheduler.io/placement-map":"big"}},"spec":{"schedulerName":"%s","terminationGracePeriodSeconds":0,"containers":[{"name":"main","image":"busybox:stable","env":[{"name":"CUDA_VISIBLE_DEVICES","value":"%d"}]}]}}' \
		"$i" "$SCHEDULER_NAME" $((i % 4)) >"$work/big/$i.json"
	[ "$i" -gt 0 ] && echo next >>"$work/big.curl"
	cat >>"$work/big.curl" <<CURL
url = "$GS_APISERVER_URL/api/v1/namespaces/$NS/pods"
cacert = "$GS_CLUSTER_CA"
header = "Authorization: Bearer $GS_ADMIN_TOKEN"
header = "Content-Type: application/json"
data-binary = "@$work/big/$i.json"
output = "/dev/null"
write-out = "%{http_code}\\n"
CURL
done
sort -o "$work/big.want" "$work/big.want"
gpm_apply big "$(cat "$work/big.map")" >/dev/null
defer "api DELETE '/api/v1/namespaces/$NS/pods?labelSelector=app%3Dbig' '{\"gracePeriodSeconds\":0}' >/dev/null"
t0=$SECONDS
check "1,000 pods naming it created (201 each)" eval \
	'[ "$(curl -s --parallel --parallel-max 8 -K "$work/big.curl" | grep -c "^201$")" = 1000 ]'
echo "  created in $((SECONDS - t0)) s"
big_bound() { kc get pods -l app=big -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' | sort; }
check_eventually "990 bound, each where the object maps it; the 10 on the missing node not" 60 \
	eval 'diff <(big_bound) "$work/big.want" >/dev/null || { diff <(big_bound) "$work/big.want" | head -n 5; false; }'
echo "  bound in $((SECONDS - t0)) s"
check_eventually "big's status: 1000 entries, 990 placed, 10 waiting" 10 \
	eval '[ "$(status_of big entries)/$(status_of big placed)/$(status_of big waiting)" = 1000/990/10 ]'
check "topReason NODE_MISSING, oldestWaiting index 37 (big-37)" eval \
	'[ "$(status_of big topReason)" = NODE_MISSING ] && [ "$(status_of big oldestWaiting.index)" = 37 ] &&
	 [ "$(status_of big oldestWaiting.pod)" = big-37 ]'
check "kubectl get gpm shows 1000, 990, 10, NODE_MISSING" eval \
	'out=$(kc get gpm big) && grep -qE "^big +1000 +990 +10 +NODE_MISSING +" <<<"$out" || { echo "$out"; false; }'

check "no status write failed" equals 0 metric 'gpu_scheduler_gpm_status_writes_total{result="failed"}'
daemon_stop
test_end
