#!/usr/bin/env bash
# phase: integration
# Issue 36, item 1 against the real apiserver (docs/sched.md, "Memory"; docs/reliability.md, "Attacks"):
# one tenant creates 800 GPUPlacementMaps of 4,096 entries each (about 49 KiB of text, some 390 KiB
# parsed: what OOM-killed both replicas of a 256 MiB Deployment before), then 300 pending pods with
# inline maps of as many entries, each its own text, while the scheduler runs in a memory cgroup of
# 256 MiB, as deploy/ limits it.
#   - it stays up through the attack and through a restart's initial list of all 800, and keeps
#     binding: another namespace's new map is held and its pod bound
#   - the tenant's maps past --placement-map-memory-per-namespace are not held: their status says
#     NotHeld with the figures, a Warning event says so, a pod naming one waits saying why
#   - the pods' inline maps past the same budget are not kept: each keeps its own entry, and is placed
#     by it (one bound to the GPU they all name, the others waiting for it)
#   - memory freed (the tenant deletes maps) lists the maps again: a refused one is held and its pod bound
# Under the sanitizers (build-asan) the cgroup is left out: ASan's shadow and quarantine are not the
# daemon's memory. The cgroup's peak usage is printed for docs/sched.md.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

N_MAPS=${GS_MAP_MEMORY_OBJECTS:-800}
N_PODS=${GS_MAP_MEMORY_PODS:-300}
N_ENTRIES=4096
LIMIT=$((256 << 20))
TENANT=$NS-t
defer "NS= kc delete namespace $TENANT --wait=false >/dev/null 2>&1"
NS='' kc create namespace "$TENANT" >/dev/null
wait_for "the ServiceAccount default of $TENANT" 60 env NS="$TENANT" "$GS_KUBECTL" --kubeconfig "$KUBECONFIG" \
	--namespace "$TENANT" get serviceaccount default >/dev/null 2>&1
CRD=gpuplacementmaps.gpu-scheduler.io
if ! NS= kc get crd "$CRD" >/dev/null 2>&1; then
	NS= kc apply -f "$GS_ROOT/deploy/crd/gpuplacementmaps.yaml" >/dev/null
	defer "NS= kc delete crd $CRD --wait=false >/dev/null 2>&1"
fi
check "the GPUPlacementMap CRD is Established" eval 'NS= kc wait --for=condition=Established "crd/$CRD" --timeout=60s >/dev/null'
N=gs-mem-$(printf '%04x' $RANDOM)
defer "node_delete $N"
node_make "$N" || { fail "node $N" "cannot create it"; test_end; }
work=$(test_workdir)

# --- the daemon in a 256 MiB memory cgroup (cgroup v1, as on these machines) -----------------------------
CG=
case $GS_BUILD_DIR in
*asan*) echo "  sanitizer build: no memory cgroup" ;;
*)
	if [ -d /sys/fs/cgroup/memory ] && [ -w /sys/fs/cgroup/memory ]; then
		CG=/sys/fs/cgroup/memory/gs-test-map-memory-$$
		mkdir "$CG"
		defer "rmdir $CG 2>/dev/null"
		echo "$LIMIT" >"$CG/memory.limit_in_bytes"
		[ -f "$CG/memory.memsw.limit_in_bytes" ] && echo "$LIMIT" >"$CG/memory.memsw.limit_in_bytes" 2>/dev/null
		# The daemon enters the cgroup, then becomes the binary: DAEMON_PID is the daemon's.
		printf '#!/bin/sh\necho $$ >%s/cgroup.procs && exec %s "$@"\n' "$CG" "$GS_DAEMON_BIN" >"$work/in-cgroup"
		chmod +x "$work/in-cgroup"
	else
		echo "  no writable cgroup v1 memory hierarchy: the daemon runs without a limit"
	fi
	;;
esac
start() {
	if [ -n "$CG" ]; then
		GS_DAEMON_BIN=$work/in-cgroup daemon_start --require-env=false
	else
		daemon_start --require-env=false
	fi
}
oom_kills() { awk '$1 == "oom_kill" { n = $2 } END { print n + 0 }' "$CG/memory.oom_control" 2>/dev/null; }
# no_oom: with the cgroup, no OOM kill in it so far (without one there is nothing to check).
no_oom() { [ -z "$CG" ] || check "no OOM kill in its cgroup" test "$(oom_kills)" = 0; }
start || exit 1
check "daemon ready" daemon_ready 30
[ -n "$CG" ] && check "the daemon runs in the 256 MiB cgroup" grep -qx "$DAEMON_PID" "$CG/cgroup.procs"

# --- before: another namespace's map and pod ----------------------------------------------------------
gpm_apply vmap "0=$N:0" >/dev/null
byref() { # NAME MAP [NS]: a pod naming MAP by reference
	kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  annotations: {gpu-scheduler.io/placement-map: "$2"}
spec:
  schedulerName: $SCHEDULER_NAME
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: busybox
    env: [{name: CUDA_VISIBLE_DEVICES, value: "${3:-0}"}]
YAML
}
byref v0-0 vmap
check_eventually "v0-0 bound before the attack" 20 eval '[ "$(pod_node v0-0)" = "$N" ]'

# --- the attack: 800 maps of 4,096 entries in the tenant's namespace --------------------------------------
mkdir -p "$work/maps"
awk -v n="$N_MAPS" -v e="$N_ENTRIES" -v dir="$work/maps" 'BEGIN {
	for (m = 0; m < n; m++) {
		f = sprintf("%s/m-%04d.json", dir, m)
		printf "{\"apiVersion\":\"gpu-scheduler.io/v1alpha1\",\"kind\":\"GPUPlacementMap\"," \
			"\"metadata\":{\"name\":\"m-%04d\"},\"spec\":{\"map\":\"", m > f
		for (i = 0; i < e; i++)
			printf "%d=t%d-n%d:%d\\n", i, m, i % 8, i % 8 > f
		printf "\"}}" > f
		close(f)
	}
}'
bytes=$(du -cb "$work"/maps/*.json | tail -1 | cut -f1)
t0=$SECONDS
ls "$work"/maps/*.json | xargs -P 8 -I{} curl -sS -o /dev/null -w '%{http_code}\n' --max-time 60 \
	--cacert "$GS_CLUSTER_CA" -H "Authorization: Bearer $GS_ADMIN_TOKEN" -H 'Content-Type: application/json' \
	--data-binary @{} "$GS_APISERVER_URL/apis/gpu-scheduler.io/v1alpha1/namespaces/$TENANT/gpuplacementmaps" \
	>"$work/codes"
check "$N_MAPS maps created ($((bytes >> 20)) MiB of JSON, $((SECONDS - t0)) s)" \
	test "$(grep -c '^201$' "$work/codes")" = "$N_MAPS"
rm -rf "$work/maps"

not_held() { metric gpu_scheduler_placement_maps_not_held; }
held_bytes() { metric 'gpu_scheduler_memory_bytes{kind="placement_maps"}'; }
check_eventually "the daemon took all $N_MAPS (most not held)" 60 eval '[ "$(not_held)" -gt $((N_MAPS / 2)) ]'
check "the daemon is up" daemon_alive
no_oom
check "what it holds of maps is within 96 MiB" test "$(held_bytes)" -le $((96 << 20))

# A refused map: its status and event say why; a pod naming it waits saying so.
with_status() { NS=$TENANT kc get gpuplacementmaps -o json | jq '[.items[] | select(.status.conditions)] | length'; }
check_eventually "every map has its status" 90 eval '[ "$(with_status)" = "$N_MAPS" ]'
refused=$(NS=$TENANT kc get gpuplacementmaps -o json |
	jq -r '[.items[] | select(any(.status.conditions[]?; .reason == "NotHeld"))][0].metadata.name')
check "a map not held was found ($refused)" test -n "$refused" -a "$refused" != null
cond() { NS=$TENANT kc get gpuplacementmap "$refused" -o jsonpath='{.status.conditions[0].message}'; }
check_eventually "its status: NotHeld, over the per-namespace budget" 10 \
	eval 'cond | grep -q "not held by the scheduler: it would take [0-9.]* KiB of its memory, and the maps of namespace $TENANT would pass its --placement-map-memory-per-namespace of 16.0 MiB"'
check_eventually "a Warning event NotHeld on it" 20 eval \
	'NS=$TENANT kc get events --field-selector involvedObject.name=$refused,reason=NotHeld -o name | grep -q .'
NS=$TENANT byref t-0 "$refused"
check_eventually "a pod naming it waits, saying why" 20 eval \
	'NS=$TENANT pod_event_has t-0 "FailedScheduling: GPUPlacementMap $TENANT/$refused \(generation 1\) is not held by the scheduler"'

# explain, from the objects as the daemon wrote their status, says what the daemon says.
ex=$("$GS_DAEMON_BIN" explain --kubeconfig "$KUBECONFIG" --require-env=false -n "$TENANT" t-0 2>&1)
check "explain agrees: t-0 waits for its map not held" \
	grep -q "MAP_INVALID: GPUPlacementMap $TENANT/$refused (generation 1) is not held by the scheduler" <<<"$ex"

# --- it keeps binding: another namespace's new map is held, its pod bound ---------------------------------
gpm_apply vmap2 "0=$N:1" >/dev/null
byref v2-0 vmap2 1
check_eventually "v2-0 bound during the attack" 30 eval '[ "$(pod_node v2-0)" = "$N" ]'

# --- pending pods with inline maps of their own: kept within the same budget, the rest keep their entry ----
mkdir -p "$work/pods"
awk -v n="$N_PODS" -v e="$N_ENTRIES" -v dir="$work/pods" -v node="$N" -v sched="$SCHEDULER_NAME" 'BEGIN {
	for (m = 0; m < n; m++) {
		f = sprintf("%s/p%04d.json", dir, m)
		printf "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%04d-0\",\"annotations\":" \
			"{\"gpu-scheduling-map\":\"0=%s:3\\n", m, node > f
		for (i = 1; i < e; i++)
			printf "%d=p%d-n%d:%d\\n", i, m, i % 8, i % 8 > f
		printf "\"}},\"spec\":{\"schedulerName\":\"%s\",\"terminationGracePeriodSeconds\":0," \
			"\"containers\":[{\"name\":\"main\",\"image\":\"busybox\"," \
			"\"env\":[{\"name\":\"CUDA_VISIBLE_DEVICES\",\"value\":\"3\"}]}]}}", sched > f
		close(f)
	}
}'
ls "$work"/pods/*.json | xargs -P 8 -I{} curl -sS -o /dev/null -w '%{http_code}\n' --max-time 60 \
	--cacert "$GS_CLUSTER_CA" -H "Authorization: Bearer $GS_ADMIN_TOKEN" -H 'Content-Type: application/json' \
	--data-binary @{} "$GS_APISERVER_URL/api/v1/namespaces/$TENANT/pods" >"$work/codes"
check "$N_PODS pods with inline maps of $N_ENTRIES entries created" test "$(grep -c '^201$' "$work/codes")" = "$N_PODS"
rm -rf "$work/pods"
not_kept() { metric gpu_scheduler_inline_maps_not_kept_total; }
check_eventually "most of their maps not kept" 60 eval '[ "$(not_kept)" -gt $((N_PODS / 2)) ]'
check "the daemon is up" daemon_alive
no_oom
on3() { NS=$TENANT kc get pods -o json | jq -r --arg n "$N" '[.items[] | select(.spec.nodeName == $n)] | length'; }
check_eventually "one of them bound to $N's GPU 3 by its entry, the others wait for it" 30 eval '[ "$(on3)" = 1 ]'

# --- a restart lists all 800 within the limit ------------------------------------------------------------
daemon_stop
start || exit 1
check "daemon ready after a restart that listed all $N_MAPS maps and $N_PODS pods" daemon_ready 60
check_eventually "the refusals again" 30 eval '[ "$(not_held)" -gt $((N_MAPS / 2)) ]'
byref v3-0 vmap2 1
kc delete pod v2-0 --grace-period=0 --force >/dev/null 2>&1
check_eventually "v3-0 bound after the restart" 30 eval '[ "$(pod_node v3-0)" = "$N" ]'
no_oom

# --- memory freed: the maps are listed again and a refused one is held ------------------------------------
# (The pods with inline maps go first: their events would take the freed bytes before the relist.)
for p in $(NS=$TENANT kc get pods -o name | grep '^pod/p[0-9]'); do echo "${p#pod/}"; done |
	xargs -r -n 50 env NS="$TENANT" "$GS_KUBECTL" --kubeconfig "$KUBECONFIG" -n "$TENANT" delete pod \
		--grace-period=0 --force >/dev/null 2>&1
check_eventually "the tenant's $N_PODS pods gone" 60 eval '[ "$(NS=$TENANT kc get pods -o name | grep -c "^pod/p[0-9]")" = 0 ]'
held=$(NS=$TENANT kc get gpuplacementmaps -o json |
	jq -r '.items[] | select(all(.status.conditions[]?; .reason != "NotHeld")) | .metadata.name')
check "the tenant has maps held ($(grep -c . <<<"$held"))" test -n "$held"
relists=$(metric 'gpu_scheduler_relists_total{resource="gpuplacementmaps"}')
NS=$TENANT kc delete gpuplacementmap $held --wait=false >/dev/null
check_eventually "the maps listed again" 30 eval \
	'[ "$(metric "gpu_scheduler_relists_total{resource=\"gpuplacementmaps\"}")" -gt "${relists:-0}" ]'
# Its entry names a node that does not exist: held now, t-0 waits for that instead.
check_eventually "t-0's map now held: t-0 waits for its node" 40 eval \
	'NS=$TENANT pod_event_has t-0 "FailedScheduling: node \"t[0-9]*-n0\" named by"'

# --- deploy/'s ResourceQuota example bounds a namespace's count at admission ------------------------------
kc apply -f "$GS_ROOT/deploy/tenant/resourcequota-gpuplacementmaps.yaml" >/dev/null
quota_used() { kc get resourcequota gpuplacementmaps -o jsonpath='{.status.used.count/gpuplacementmaps\.gpu-scheduler\.io}'; }
check_eventually "the quota counts this namespace's 2 maps" 20 eval '[ "$(quota_used)" = 2 ]'
for i in $(seq 3 50); do printf '%s\n' "$i"; done | xargs -P 8 -I{} sh -c \
	"printf 'apiVersion: gpu-scheduler.io/v1alpha1\nkind: GPUPlacementMap\nmetadata: {name: q-{}}\nspec: {map: \"0=$N:0\"}\n' |
	 $GS_KUBECTL --kubeconfig $KUBECONFIG -n $NS create -f - >/dev/null"
out=$(gpm_apply q-51 "0=$N:0")
check "the 51st map is refused at admission (exceeded quota)" grep -q 'exceeded quota: gpuplacementmaps' <<<"$out"

if [ -n "$CG" ]; then
	peak=$(cat "$CG/memory.max_usage_in_bytes")
	echo "  cgroup peak usage: $((peak >> 20)) MiB of $((LIMIT >> 20)) MiB ($N_MAPS maps of $N_ENTRIES entries)"
	no_oom
	check "peak usage under the limit" test "$peak" -lt "$LIMIT"
fi
NS=$TENANT force_delete_pods
daemon_stop
test_end
