#!/usr/bin/env bash
# `gpu-scheduler status` (issue 23, item 6) against the real apiserver: a StatefulSet of three pods whose
# map has four entries, two pods bound, one waiting for a node that does not exist, the fourth index not
# created. The command's rows, its JSON, and the daemon's /debug/workloads/NS/KIND/NAME on its secure
# port, asked by the command through the apiserver's pod proxy with the caller's token as explain asks
# (the Lease names the leader): both views agree; a flag that makes them differ is said row by row;
# without a Lease the command prints its own view and says why; the kubectl plugin; clear errors. Then
# a GPUPlacementMap (issue 24): explain of pods naming it, status gpm/NAME, status of a StatefulSet whose
# template names it and that has no pod yet, and the daemon's view of an object of its own pods
# (/debug/workloads/NS/gpuplacementmap/NAME), which the command finds agreeing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

N=gs-st-$(printf '%04x' $RANDOM)
defer "node_delete $N"
node_make "$N" || { fail "node $N" "cannot create it"; test_end; }

sport=$(free_port)
DAEMON_INSECURE=0 daemon_start --secure-addr "0.0.0.0:$sport" --require-env=false || exit 1
SURL=https://127.0.0.1:$sport
check "daemon ready" daemon_ready 30

statefulset_yaml st 3 "0=$N:0" "1=$N:1" "2=$N-missing:0" "3=$N:2" | kc apply -f - >/dev/null
check_eventually "st-0 bound to $N" 30 pod_on st-0 "$N"
check_eventually "st-1 bound to $N" 30 pod_on st-1 "$N"
check_eventually "st-2 waits for its node" 30 pod_event_has st-2 "FailedScheduling: node \"$N-missing\""

# The daemon's own view, on its secure port (the admin's token: get on /debug/*).
sdebug() { curl -sk --max-time 5 -H "Authorization: Bearer $GS_ADMIN_TOKEN" "$SURL/debug/$1"; }
rows_of() { jq -r '[.rows[] | "\(.index // "-"):\(.pod // "-"):\(.state):\(.reason // "-"):\(.node // "-"):\(.devices // "-")"] | join(" ")'; }
want="0:st-0:BOUND:-:$N:0 1:st-1:BOUND:-:$N:1 2:st-2:WAITING:NODE_MISSING:$N-missing:0 3:-:NOT_CREATED:-:$N:2"
check_eventually "/debug/workloads: four rows, the fourth not created" 10 \
	equals "$want" eval 'sdebug "workloads/$NS/statefulset/st" | rows_of'
dj=$(sdebug "workloads/$NS/statefulset/st")
check "/debug/workloads: the counts, the pods' map, no gang yet" \
	equals "3 1 pods 4 2 1 null" jq -r '"\(.pods) \(.notCreated) \(.map.from) \(.map.entries) \(.byState.BOUND) \(.byState.WAITING) \(.gang)"' <<<"$dj"
check "/debug/workloads: the owner's uid" \
	equals "$(kc get statefulset st -o jsonpath='{.metadata.uid}')" jq -r .ownerUid <<<"$dj"
check "/debug/workloads: sts/ is statefulset/" equals "$want" eval 'sdebug "workloads/$NS/sts/st" | rows_of'
check "/debug/workloads of an owner with no pod known: 200, no row" \
	equals "0" eval 'sdebug "workloads/$NS/job/nope" | jq ".rows | length"'
check "/debug/workloads of another kind: 404" \
	equals 404 curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $GS_ADMIN_TOKEN" "$SURL/debug/workloads/$NS/deployment/st"
check "/debug/workloads without a token: 401" \
	equals 401 curl -sk -o /dev/null -w '%{http_code}' "$SURL/debug/workloads/$NS/statefulset/st"

# The command: its own reads, then the leader asked through the pod proxy.
if ! proxy_pod st-proxy; then
	fail "pod proxy" "this machine has no global IPv4 address for the apiserver to dial"
	test_end
fi
lease_holder gs-status st-proxy
cli() {
	"$GS_BUILD/gpu-scheduler" status --kubeconfig "$KUBECONFIG" -n "$NS" --scheduler-namespace "$NS" \
		--lease-name gs-status --secure-port "$sport" "$@"
}
said=$(cli --require-env=false statefulset/st)
printf '%s\n' "$said" | sed 's/^/    | /'
check "status: the summary" eval \
	'grep -q "^StatefulSet $NS/st: 3 pods (1 WAITING, 2 BOUND), 1 index not created; the map has 4 entries (from the pod template)" <<<"$said"'
check "status: the header and one row per index" eval '
	grep -Eq "^INDEX +POD +NODE +DEVICES +STATE +REASON +AGE$" <<<"$said" &&
	grep -Eq "^0 +st-0 +$N +0 +BOUND +- +[0-9]+[smh]$" <<<"$said" &&
	grep -Eq "^1 +st-1 +$N +1 +BOUND +- +[0-9]+[smh]$" <<<"$said" &&
	grep -Eq "^2 +st-2 +$N-missing +0 +WAITING +NODE_MISSING +[0-9]+[smh]$" <<<"$said" &&
	grep -Eq "^3 +- +$N +2 +not created +- +-$" <<<"$said"'
check "status: the waiting pod's message" eval 'grep -q "^  st-2: NODE_MISSING: node \"$N-missing\" named by" <<<"$said"'
check "status: the daemon agrees" eval \
	'grep -q "The daemon (leader st-proxy, through the apiserver.s pod proxy) agrees: the same pods, states, reasons and nodes." <<<"$said"'

cj=$(cli --require-env=false -o json statefulset/st)
check "status -o json: the same rows as the daemon, the template's map, the daemon's answer" eval '
	[ "$(rows_of <<<"$cj")" = "$want" ] &&
	jq -e ".map.from == \"template\" and .daemon.leader == \"st-proxy\" and .daemon.agrees and (.daemon.answer.rows | length) == 4 and .gang == null" <<<"$cj" >/dev/null'

# --require-env=true here, false in the daemon: st-2's reason differs (no CUDA_VISIBLE_DEVICES), said.
said=$(cli --require-env=true sts/st)
check "status says where they disagree, row by row" eval '
	grep -q "The daemon (leader st-proxy, through the apiserver.s pod proxy) DISAGREES:" <<<"$said" &&
	grep -q "  index 2 st-2: here WAITING NOT_MUTATED on $N-missing, the daemon WAITING NODE_MISSING on $N-missing" <<<"$said"'
said=$(cli --require-env=false --lease-name gs-no-lease statefulset/st)
check "status without a Lease: its own view, and why the daemon was not asked" eval '
	grep -Eq "^2 +st-2 +$N-missing +0 +WAITING +NODE_MISSING" <<<"$said" &&
	grep -q "The daemon: not asked: cannot read the Lease $NS/gs-no-lease" <<<"$said"'
said=$(cli --require-env=false --daemon=false statefulset/st)
check "status --daemon=false: no question" eval '! grep -q "The daemon" <<<"$said" && grep -q "^3 " <<<"$said"'

# A template with a fifth entry (OnDelete: no pod is replaced): the command lists it, from the template;
# the daemon, which reads no StatefulSet, lists its pods' map's.
kc patch statefulset st --type merge -p "{\"spec\":{\"updateStrategy\":{\"type\":\"OnDelete\",\"rollingUpdate\":null},\"template\":{\"metadata\":{\"annotations\":{\"$GS_ANNOTATION\":\"0=$N:0\\n1=$N:1\\n2=$N-missing:0\\n3=$N:2\\n4=$N:3\\n\"}}}}}" >/dev/null
said=$(cli --require-env=false statefulset/st)
check "a new template entry: a row not created here, which the daemon has not" eval '
	grep -Eq "^4 +- +$N +3 +not created" <<<"$said" &&
	grep -q "  index 4 (not created): here NOT_CREATED on $N, the daemon has no such row" <<<"$said"'

# The kubectl plugin.
plug=$(mktemp -d)
defer "rm -rf $plug"
ln -s "$GS_ROOT/deploy/kubectl-gpu_scheduler" "$plug/kubectl-gpu_scheduler"
check "kubectl gpu-scheduler status (plugin) prints the rows" eval '
	PATH="$plug:$PATH" GPU_SCHEDULER="$GS_BUILD_DIR/gpu-scheduler" KUBECONFIG="$KUBECONFIG" "$GS_KUBECTL" \
		gpu-scheduler status -n "$NS" --daemon=false statefulset/st | grep -Eq "^1 +st-1 +$N"'

# The rights the command needs for its own reads: deploy/rbac.yaml's ClusterRole gpu-scheduler-status alone.
work=$(test_workdir)
sa_role_kubeconfig "$GS_ROOT/deploy/rbac.yaml" gpu-scheduler-status viewer "$work/viewer.kubeconfig"
check "status with gpu-scheduler-status only (deploy/rbac.yaml): the rows" eval '
	"$GS_BUILD/gpu-scheduler" status --kubeconfig "$work/viewer.kubeconfig" -n "$NS" --require-env=false \
		--daemon=false statefulset/st | grep -Eq "^2 +st-2 +$N-missing +0 +WAITING +NODE_MISSING"'

# Errors: clear, non-zero, nothing on stdout.
check "status of a missing StatefulSet: exit 1, the apiserver's message" eval '
	e=$(cli statefulset/nope 2>&1 >/dev/null); [ $? -eq 1 ] && grep -q "statefulsets.apps \"nope\" not found" <<<"$e"'
check "status of a Job that does not exist: exit 1" eval '
	e=$(cli job/nope 2>&1 >/dev/null); [ $? -eq 1 ] && grep -q "jobs.batch \"nope\" not found" <<<"$e"'
check "status of another kind: exit 2" eval 'cli deployment/st >/dev/null 2>&1; [ $? -eq 2 ]'
check "status with a bad name: exit 2" eval 'cli statefulset/Bad_Name >/dev/null 2>&1; [ $? -eq 2 ]'

# Maps as objects (issue 24): a GPUPlacementMap and bare pods naming it, of a scheduler no daemon serves
# (gs-nobody: they stay pending whatever the daemon knows), asked with --scheduler-name gs-nobody. The
# commands feed the objects before the pods: a pod by reference is judged by its object's entry, never
# MAP_MISSING while the object exists. (Above, before the CRD was installed, the same commands read a 404
# for the resource as no object.)
CRD=gpuplacementmaps.gpu-scheduler.io
if ! kc get crd "$CRD" >/dev/null 2>&1; then
	kc apply -f "$GS_ROOT/deploy/crd/gpuplacementmaps.yaml" >/dev/null
	defer "kc delete crd $CRD --wait=false >/dev/null 2>&1"
fi
check "the GPUPlacementMap CRD is Established" kc wait --for=condition=Established "crd/$CRD" --timeout=60s
gpm_apply ranks "0=$N:3\n1=$N-missing:0\n2=$N:2" >/dev/null
ref_pod() { # NAME OBJECT DEVICES
	SCHEDULER_NAME=gs-nobody POD_ENV=$3 POD_ANNOTATIONS="    gpu-scheduler.io/placement-map: $2
    gpu-scheduler.io/placement-map-generation: \"1\"" pod_yaml "$1" | kc apply -f - >/dev/null
}
ref_pod r-0 ranks 3
ref_pod r-1 ranks 0
ref_pod lone-0 nope 0
nobody() { # COMMAND ARGS...
	local c=$1
	shift
	"$GS_BUILD/gpu-scheduler" "$c" --kubeconfig "$KUBECONFIG" -n "$NS" --scheduler-name gs-nobody \
		--require-env=false --daemon=false "$@"
}
nobody explain r-0 2>/dev/null | sed 's/^/    | /'
check "explain of a pod by reference whose entry's node is missing: NODE_MISSING, not MAP_MISSING" \
	equals NODE_MISSING eval 'nobody explain -o json r-1 2>/dev/null | jq -r .verdict'
check "explain of a pod by reference whose entry fits: queued, verdict NONE (every check passes), as the daemon says" \
	equals "QUEUED NONE null" eval 'nobody explain -o json r-0 2>/dev/null | jq -r "\"\(.state) \(.verdict) \(.waitsFor)\""'
check "explain -o json of a pod by reference: its object found, at generation 1" \
	equals "ranks true 1" eval 'nobody explain -o json r-1 2>/dev/null | jq -r "\"\(.mapRef.name) \(.mapRef.found) \(.mapRef.generation)\""'
check "explain of a pod naming an object that does not exist: MAP_MISSING, cleared by the object's creation" \
	equals "MAP_MISSING the creation of GPUPlacementMap $NS/nope (or an update of the pod itself naming another one)" \
	eval 'nobody explain -o json lone-0 2>/dev/null | jq -r "\"\(.verdict) \(.waitsFor)\""'

gj=$(nobody status -o json gpm/ranks)
printf '%s\n' "$gj" | sed 's/^/    | /'
check "status gpm/NAME -o json: the object's status (3 entries, 0 placed, 2 waiting: 1 NODE_MISSING)" \
	equals "3 0 2 NODE_MISSING:1 1 r-1 false" jq -r '.status | "\(.entries) \(.placed) \(.waiting) \([.reasons[] | "\(.reason):\(.count)"] | join(",")) \(.oldestWaiting.index) \(.oldestWaiting.pod) \(.ready)"' <<<"$gj"
check "status gpm/NAME -o json: one row per index, from the object's map" \
	equals "GPUPlacementMap object ranks 0:r-0:QUEUED:-:$N:3 1:r-1:WAITING:NODE_MISSING:$N-missing:0 2:-:NOT_CREATED:-:$N:2" \
	eval 'echo "$(jq -r "\"\(.kind) \(.map.from) \(.map.object)\"" <<<"$gj") $(rows_of <<<"$gj")"'
said=$(nobody status gpuplacementmap/ranks)
printf '%s\n' "$said" | sed 's/^/    | /'
check "status gpuplacementmap/NAME: the status line, the oldest waiting pod and the rows" eval '
	grep -q "^Status (generation 1): not ready; 3 entries, 0 placed, 2 waiting (1 NODE_MISSING)$" <<<"$said" &&
	grep -q "^  oldest waiting: index 1, r-1: NODE_MISSING: " <<<"$said" &&
	grep -q "^GPUPlacementMap $NS/ranks: 2 pods (1 WAITING, 1 QUEUED), 1 index not created; the map has 3 entries (from GPUPlacementMap $NS/ranks)" <<<"$said" &&
	grep -Eq "^1 +r-1 +$N-missing +0 +WAITING +NODE_MISSING +[0-9]+[smh]$" <<<"$said" &&
	grep -Eq "^2 +- +$N +2 +not created +- +-$" <<<"$said"'
# A StatefulSet whose pod template names the object, with no pod yet (replicas 0): the command reads
# the template's reference and lists every index of the object's map, not created.
SCHEDULER_NAME=gs-nobody TEMPLATE_ANNOTATIONS="gpu-scheduler.io/placement-map: ranks" statefulset_yaml refsts 0 |
	kc apply -f - >/dev/null
said=$(nobody status statefulset/refsts)
printf '%s\n' "$said" | sed 's/^/    | /'
check "status statefulset/NAME by reference, no pod yet: a row per index of the object's map" eval '
	grep -q "^StatefulSet $NS/refsts: 0 pods, 3 indices not created; the map has 3 entries (from GPUPlacementMap $NS/ranks)$" <<<"$said" &&
	grep -Eq "^0 +- +$N +3 +not created +- +-$" <<<"$said" &&
	grep -Eq "^1 +- +$N-missing +0 +not created +- +-$" <<<"$said" &&
	grep -Eq "^2 +- +$N +2 +not created +- +-$" <<<"$said"'
check "status statefulset/NAME -o json by reference, no pod yet: the object's map, three rows not created" \
	equals "object ranks 3 0 3 0:-:NOT_CREATED:-:$N:3 1:-:NOT_CREATED:-:$N-missing:0 2:-:NOT_CREATED:-:$N:2" \
	eval 'j=$(nobody status -o json sts/refsts); echo "$(jq -r "\"\(.map.from) \(.map.object) \(.map.entries) \(.pods) \(.notCreated)\"" <<<"$j") $(rows_of <<<"$j")"'
SCHEDULER_NAME=gs-nobody TEMPLATE_ANNOTATIONS="gpu-scheduler.io/placement-map: nope" statefulset_yaml refnone 0 |
	kc apply -f - >/dev/null
check "status statefulset/NAME naming an object that does not exist: no map, said" eval '
	nobody status statefulset/refnone | grep -q "^StatefulSet $NS/refnone: 0 pods, 0 indices not created; no map: GPUPlacementMap $NS/nope does not exist$"'

# The daemon's view of an object of its own pods (/debug/workloads/NS/gpuplacementmap/NAME: the rows and
# the status) and the command's agree. The daemon started before the CRD: it asks again every 30 s.
gpm_apply ours "0=$N:2\n1=$N-missing:1" >/dev/null
POD_ANNOTATIONS="    gpu-scheduler.io/placement-map: ours" pod_yaml o-0 | kc apply -f - >/dev/null
POD_ANNOTATIONS="    gpu-scheduler.io/placement-map: ours" pod_yaml o-1 | kc apply -f - >/dev/null
check_eventually "the daemon holds the object once the CRD is installed" 45 \
	equals 2 eval 'sdebug "workloads/$NS/gpuplacementmap/ours" | jq -r .status.entries'
check_eventually "o-0 bound where the object maps index 0" 20 pod_on o-0 "$N"
check_eventually "/debug/workloads/NS/gpuplacementmap/NAME: the object's rows" 10 \
	equals "0:o-0:BOUND:-:$N:2 1:o-1:WAITING:NODE_MISSING:$N-missing:1" eval 'sdebug "workloads/$NS/gpuplacementmap/ours" | rows_of'
check "/debug/workloads/NS/gpuplacementmap/NAME: its status (2 entries, 1 placed, 1 waiting)" \
	equals "2 1 1 false" eval 'sdebug "workloads/$NS/gpuplacementmap/ours" | jq -r ".status | \"\(.entries) \(.placed) \(.waiting) \(.ready)\""'
check "/debug/workloads of an object the daemon does not hold: 404" \
	equals 404 curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $GS_ADMIN_TOKEN" "$SURL/debug/workloads/$NS/gpuplacementmap/nope"
said=$(cli --require-env=false gpm/ours)
printf '%s\n' "$said" | sed 's/^/    | /'
check "status gpm/NAME: the daemon agrees" eval \
	'grep -q "The daemon (leader st-proxy, through the apiserver.s pod proxy) agrees: the same pods, states, reasons and nodes." <<<"$said"'
check "status gpm/NAME with gpu-scheduler-status only (deploy/rbac.yaml): the rows" eval '
	"$GS_BUILD/gpu-scheduler" status --kubeconfig "$work/viewer.kubeconfig" -n "$NS" --scheduler-name gs-nobody \
		--require-env=false --daemon=false gpm/ranks | grep -Eq "^0 +r-0 +$N +3 +QUEUED"'
# Without the rule on gpuplacementmaps (the status ClusterRole before it): a 403, said with the rule.
cat >"$work/nogpm.yaml" <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: gs-nogpm
rules:
  - apiGroups: [""]
    resources: ["pods", "nodes"]
    verbs: ["get", "list"]
YAML
sa_role_kubeconfig "$work/nogpm.yaml" gs-nogpm nogpm "$work/nogpm.kubeconfig"
check "status without list on gpuplacementmaps: exit 1, the rule it lacks said" eval '
	e=$("$GS_BUILD/gpu-scheduler" status --kubeconfig "$work/nogpm.kubeconfig" -n "$NS" --scheduler-name gs-nobody \
		--daemon=false gpm/ranks 2>&1 >/dev/null); [ $? -eq 1 ] &&
	grep -q "the caller needs get and list on gpuplacementmaps.gpu-scheduler.io (ClusterRole gpu-scheduler-status" <<<"$e"'
check "status of a GPUPlacementMap that does not exist: exit 1, said" eval '
	e=$(nobody status gpm/nope 2>&1 >/dev/null); [ $? -eq 1 ] && grep -q "GPUPlacementMap $NS/nope not found" <<<"$e"'

daemon_stop TERM 15 && pass "SIGTERM: exit 0"
test_end
