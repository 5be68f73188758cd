#!/usr/bin/env bash
# `gpu-scheduler lint` as CI and pre-commit run it: its exit statuses (0 clean or warnings, 1 errors or
# --strict warnings, 2 usage and I/O), the line of a bad entry inside the file, and the node checks with
# the nodes read from the real apiserver (--kubeconfig: node1..node4 with 4 GPUs, plus a node named like
# kind's workers carrying an alias label), the same as from `kubectl get nodes -o yaml|json` (--nodes);
# with --kubeconfig, the warning about a mapped node without the taint gpu-scheduler.io/dedicated that
# runs pods getting nvidia.com/gpu from the device plugin, gone once the printed kubectl command ran;
# GPUPlacementMap objects and the workloads naming them, and notes (which never fail).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
test_begin

LINT=("$GS_DAEMON_BIN" lint)
work=$(test_workdir)
FX=$GS_ROOT/tests/fixtures/lint

# rc_is WANT CMD...: CMD's exit status is WANT (its stdout in $work/last.out, stderr in last.err).
rc_is() {
	local want=$1 rc
	shift
	"$@" >"$work/last.out" 2>"$work/last.err"
	rc=$?
	[ "$rc" = "$want" ] || { echo "exit $rc, want $want: $(head -c 600 "$work/last.out" "$work/last.err")"; return 1; }
}
out_has() { grep -qE "$1" "$work/last.out" || { echo "stdout lacks /$1/:"; cat "$work/last.out"; return 1; }; }

# --- exit statuses, without nodes -------------------------------------------------------------------------
check "clean example: exit 0" rc_is 0 "${LINT[@]}" "$GS_ROOT/deploy/examples/gpu-scheduler-check.yaml"
check "clean example: nothing on stdout" test ! -s "$work/last.out"
check "bad map: exit 1" rc_is 1 "${LINT[@]}" "$FX/bad-map.yaml"
check "bad map: the line of the bad entry in the file" out_has "^$FX/bad-map.yaml:15: error: .*line 3: missing '='"
check "warnings only: exit 0" rc_is 0 "${LINT[@]}" "$FX/reach.yaml"
check "warnings only: printed" out_has "reach.yaml:8: warning: .*NO_ENTRY"
check "warnings with --strict: exit 1" rc_is 1 "${LINT[@]}" --strict "$FX/reach.yaml"
check "-q: errors only" rc_is 0 "${LINT[@]}" -q "$FX/reach.yaml"
check "-q: no warning printed" test ! -s "$work/last.out"
check "stdin (-)" eval 'rc_is 1 "${LINT[@]}" - <"$FX/bad-map.yaml" && out_has "^<stdin>:15: error"'
check "YAML syntax error: exit 1 with its line" eval 'rc_is 1 "${LINT[@]}" "$FX/syntax.yaml" && out_has "syntax.yaml:7: error: YAML"'
# issue 20 item 7, issue 22: every problem of a map in one run; duplicate keys; nesting capped in linear time
check "three findings of one map: exit 1" rc_is 1 "${LINT[@]}" "$FX/many-problems.yaml"
check "... the duplicate index at its line" out_has "^$FX/many-problems.yaml:16: error: .*line 2: duplicate index 0 \\(first on line 1\\)"
check "... the line without '=' at its line" out_has "^$FX/many-problems.yaml:17: error: .*line 3: missing '='"
check "... the indices without an entry" out_has "^$FX/many-problems.yaml:9: warning: .*no entry for index 1, 2.*NO_ENTRY"
check "... and nothing else" test "$(grep -c . "$work/last.out")" = 3
check "duplicate keys: exit 1" rc_is 1 "${LINT[@]}" "$FX/dup-keys.yaml"
check "... each at its line, naming the first" out_has "^$FX/dup-keys.yaml:11: error: duplicate key \"gpu-scheduling-map\" at line 11 \\(first at line 9\\)"
check "... the last map is the one checked" out_has "^$FX/dup-keys.yaml:12: error: .*invalid device \"x\""
check "nesting past the limit: exit 1 with its line, the document before still read" eval \
	'rc_is 1 "${LINT[@]}" "$FX/deep.yaml" && out_has "^$FX/deep.yaml:13: error: nesting deeper than 100 at line 13" && test "$(grep -c . "$work/last.out")" = 1'
# issue 23: the all-or-nothing rules, each at its line, as errors
check "all-or-nothing rules: exit 1" rc_is 1 "${LINT[@]}" "$FX/gang.yaml"
check "... OrderedReady by default" out_has "^$FX/gang.yaml:39: error: StatefulSet ml/gang-ordered: .*can never complete: pod 1 is not created until pod 0 is Ready; set podManagementPolicy: Parallel"
check "... a bad gang-timeout, the webhook's message" out_has "^$FX/gang.yaml:182: error: .*gpu-scheduler.io/gang-timeout \"10x\" is not a duration"
check "... gang-size above the map" out_has "^$FX/gang.yaml:160: error: .*gang-size 8 is more than the 4 entries of gpu-scheduling-map: the gang could never complete"
check "... gang-size above a Job's parallelism" out_has "^$FX/gang.yaml:265: error: Job ml/gang-job: .*more than parallelism 2"
check "... 12 errors in all" test "$(grep -c ': error: ' "$work/last.out")" = 12
# issue 24: maps as objects; a reference to an object not in the files is a note, which never fails
check "by reference, the object in the file: exit 0, silent" eval \
	'rc_is 0 "${LINT[@]}" --strict "$GS_ROOT/deploy/examples/check-statefulset-by-reference.yaml" && test ! -s "$work/last.out"'
check "objects and references across two files: exit 1" rc_is 1 "${LINT[@]}" "$FX/gpm.yaml" "$FX/gpm-objects.yaml"
check "... the object's map at its line" out_has "^$FX/gpm.yaml:13: error: GPUPlacementMap ml/ranks: spec.map line 3: missing '='"
check "... the object's gang against the replicas, at the reference" out_has "^$FX/gpm.yaml:28: error: StatefulSet ml/train: the gang of the map's 3 entries"
check "... the other file's object found: its entries' indices missing" out_has "^$FX/gpm.yaml:111: warning: Job ml/job: completions 4 but no entry for index 2, 3"
check "... a note for the object not in the files" out_has "^$FX/gpm.yaml:131: note: StatefulSet other/elsewhere: GPUPlacementMap other/ranks is not in the files given"
check "... counted in the summary" grep -q "9 errors, 6 warnings, 1 note$" "$work/last.err"
printf 'kind: Pod\nmetadata:\n  name: p-0\n  annotations:\n    gpu-scheduler.io/placement-map: in-the-cluster\nspec:\n  schedulerName: gpu-scheduler\n' >"$work/note.yaml"
check "a note alone: exit 0 even with --strict" eval 'rc_is 0 "${LINT[@]}" --strict "$work/note.yaml" && out_has "note.yaml:5: note: .*in-the-cluster is not in the files given"'
check "... -q hides it" eval 'rc_is 0 "${LINT[@]}" -q "$work/note.yaml" && test ! -s "$work/last.out"'
python3 -c 'import sys; n = 100000; sys.stdout.write("[" * n + "]" * n + "\n")' >"$work/brackets.yaml"
t0=$(date +%s%N)
check "100,000 nested brackets (200 KB): exit 1, refused" eval 'rc_is 1 "${LINT[@]}" "$work/brackets.yaml" && out_has "brackets.yaml:1: error: nesting deeper than 100 at line 1"'
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "... in under 2 s (it took 24-30 s before the cap): ${ms} ms" test "$ms" -lt 2000
check "a file that does not exist: exit 2" rc_is 2 "${LINT[@]}" "$work/nope.yaml"
check "no file: exit 2" rc_is 2 "${LINT[@]}"
check "unknown option: exit 2" rc_is 2 "${LINT[@]}" --frobnicate "$FX/good.yaml"
check "--nodes and --kubeconfig together: exit 2" rc_is 2 "${LINT[@]}" --nodes "$FX/nodes.yaml" --kubeconfig "$KUBECONFIG" "$FX/good.yaml"
check "--nodes that is not a NodeList: exit 2" rc_is 2 "${LINT[@]}" --nodes "$FX/bad-map.yaml" "$FX/good.yaml"
printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: x}\n' >"$work/dead.kubeconfig"
check "--kubeconfig to an apiserver that does not answer: exit 2" rc_is 2 "${LINT[@]}" --kubeconfig "$work/dead.kubeconfig" "$FX/good.yaml"
check "... saying why" grep -q 'nodes' "$work/last.err"

# --- nodes from the apiserver ----------------------------------------------------------------------------
WORKER=gs-lint-worker-$(printf '%04x' $RANDOM)
ALIAS=lintnode-$(printf '%04x' $RANDOM)
defer "node_delete $WORKER"
node_make "$WORKER"
kc label node "$WORKER" "gpu-scheduler.io/node=$ALIAS" >/dev/null
cat >"$work/m.yaml" <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: lint-live
spec:
  replicas: 4
  template:
    metadata:
      annotations:
        gpu-scheduling-map: |
          0=node1:0,1
          1=node9:0
          2=node2:7
          3=$ALIAS:3
    spec:
      schedulerName: gpu-scheduler
YAML
check "--kubeconfig: clean example, exit 0 and silent" eval \
	'rc_is 0 "${LINT[@]}" --kubeconfig "$KUBECONFIG" "$GS_ROOT/deploy/examples/gpu-scheduler-check.yaml" && test ! -s "$work/last.out"'
check "--kubeconfig: warnings, exit 0" rc_is 0 "${LINT[@]}" --kubeconfig "$KUBECONFIG" "$work/m.yaml"
cp "$work/last.out" "$work/kube.out"
check "--kubeconfig: a node the cluster lacks (line 12)" out_has "m.yaml:12: warning: .*\"node9\".*NODE_MISSING"
check "--kubeconfig: a device above what node2 advertises (line 13)" out_has "m.yaml:13: warning: .*\"node2\" advertises 4 nvidia.com/gpu.*device 7.*NODE_DEVICES"
check "--kubeconfig: the alias label resolves $ALIAS to $WORKER (no warning on line 14)" eval '! grep -q "m.yaml:14:" "$work/last.out"'
check "--kubeconfig: exactly those two warnings" test "$(grep -c . "$work/kube.out")" = 2
check "--kubeconfig --strict: exit 1" rc_is 1 "${LINT[@]}" --strict --kubeconfig "$KUBECONFIG" "$work/m.yaml"
check "--node-alias-label '': aliases off, $ALIAS is missing" eval \
	'rc_is 0 "${LINT[@]}" --node-alias-label "" --kubeconfig "$KUBECONFIG" "$work/m.yaml" && out_has "m.yaml:14: warning: .*NODE_MISSING"'
# The device: $WORKER advertises 4 GPUs; relabel it with 2 and device 3 no longer exists.
api PATCH "/api/v1/nodes/$WORKER/status" '{"status":{"allocatable":{"nvidia.com/gpu":"2"},"capacity":{"nvidia.com/gpu":"2"}}}' \
	application/merge-patch+json >/dev/null
check_eventually "--kubeconfig: the node's new allocatable is read (device 3 of 2, via the alias)" 10 eval \
	'rc_is 0 "${LINT[@]}" --kubeconfig "$KUBECONFIG" "$work/m.yaml" && out_has "m.yaml:14: warning: .*\"$ALIAS\" \\(node $WORKER\\) advertises 2"'
cp "$work/last.out" "$work/kube2.out"

# --- --nodes from kubectl's output reads the same ---------------------------------------------------------
kc get nodes -o yaml >"$work/nodes.yaml"
kc get nodes -o json >"$work/nodes.json"
check "--nodes (kubectl get nodes -o yaml): the same diagnostics as --kubeconfig" eval \
	'rc_is 0 "${LINT[@]}" --nodes "$work/nodes.yaml" "$work/m.yaml" && diff "$work/kube2.out" "$work/last.out"'
check "--nodes (-o json): the same" eval \
	'rc_is 0 "${LINT[@]}" --nodes "$work/nodes.json" "$work/m.yaml" && diff "$work/kube2.out" "$work/last.out"'

# --- device-plugin GPU pods on a mapped node without the dedicated taint ------------------------------------
# Pods of another scheduler bound to $WORKER at creation (no kubelet: they stay Pending, as good as
# running for the device plugin's count), four asking for nvidia.com/gpu, one not, one that ended.
for p in gpu-a gpu-b gpu-c gpu-d gpu-done; do plugin_pod "$WORKER" "$p" 1; done
plugin_pod "$WORKER" cpu-only 0
api PATCH "/api/v1/namespaces/$NS/pods/gpu-done/status" '{"status":{"phase":"Succeeded"}}' application/merge-patch+json >/dev/null
check "--kubeconfig: GPU pods on $WORKER, untainted: a warning, exit 0" rc_is 0 "${LINT[@]}" --kubeconfig "$KUBECONFIG" "$work/m.yaml"
check "... at the node's line (14), naming it and its real name, the 4 running GPU pods (3 shown) and the taint" \
	out_has "m.yaml:14: warning: node \"$ALIAS\" \\(node $WORKER\\), which maps use, has no gpu-scheduler.io/dedicated:NoSchedule taint and runs 4 pods that get nvidia.com/gpu from the device plugin \\($NS/gpu-a, $NS/gpu-b, $NS/gpu-c and 1 more\\)"
check "... with the command that dedicates it" out_has "kubectl taint nodes $WORKER gpu-scheduler.io/dedicated=true:NoSchedule"
check "... nothing about node1 or node2 (no GPU pod there)" eval '[ "$(grep -c "which maps use" "$work/last.out")" = 1 ]'
check "--strict: that warning fails (exit 1)" rc_is 1 "${LINT[@]}" --strict --kubeconfig "$KUBECONFIG" "$work/m.yaml"
kc taint node "$WORKER" gpu-scheduler.io/dedicated=true:PreferNoSchedule >/dev/null
check "a PreferNoSchedule taint of that key does not count: still warned" eval \
	'rc_is 0 "${LINT[@]}" --kubeconfig "$KUBECONFIG" "$work/m.yaml" && out_has "m.yaml:14: warning: .*which maps use"'
kc taint node "$WORKER" gpu-scheduler.io/dedicated- >/dev/null
cmd=$(grep -o "kubectl taint nodes $WORKER [^ ]*" "$work/last.out")
check "the printed command run as it is ($cmd)" eval "$cmd --kubeconfig \"\$KUBECONFIG\" >/dev/null"
check "tainted: no warning about $WORKER any more" eval \
	'rc_is 0 "${LINT[@]}" --kubeconfig "$KUBECONFIG" "$work/m.yaml" && ! grep -q "which maps use" "$work/last.out"'
check "--nodes (no pods read): no such warning either" eval \
	'kc taint node "$WORKER" gpu-scheduler.io/dedicated- >/dev/null && kc get nodes -o yaml >"$work/nodes2.yaml" &&
	 rc_is 0 "${LINT[@]}" --nodes "$work/nodes2.yaml" "$work/m.yaml" && ! grep -q "which maps use" "$work/last.out"'
# An identity that may list nodes but not pods: the node checks still run, this one is skipped, saying why.
kc create serviceaccount lint-nodes-only >/dev/null
role=gs-test-$NS-nodes-only
defer "NS= kc delete clusterrolebinding $role >/dev/null 2>&1; NS= kc delete clusterrole $role >/dev/null 2>&1"
NS= kc create clusterrole "$role" --verb=list --resource=nodes >/dev/null
NS= kc create clusterrolebinding "$role" --clusterrole="$role" --serviceaccount="$NS:lint-nodes-only" >/dev/null
printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "%s", certificate-authority: "%s"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: "%s"}\n' \
	"$GS_APISERVER_URL" "$GS_CLUSTER_CA" "$(kc create token lint-nodes-only)" >"$work/nodes-only.kubeconfig"
check_eventually "nodes but not pods readable (403): exit 0, the node checks done" 10 eval \
	'rc_is 0 "${LINT[@]}" --kubeconfig "$work/nodes-only.kubeconfig" "$work/m.yaml" && out_has "m.yaml:12: warning: .*NODE_MISSING"'
check "... no dedicated-taint warning, and stderr says the pods could not be read" eval \
	'! grep -q "which maps use" "$work/last.out" && grep -q "GET /api/v1/pods: HTTP 403.*not checked for device-plugin GPU pods" "$work/last.err"'
force_delete_pods

# --- as a pre-commit hook: the entry of .pre-commit-hooks.yaml, on several files at once ----------------------
entry=$(python3 -c 'import sys, yaml; h = yaml.safe_load(open(sys.argv[1])); print(h[0]["entry"])' "$GS_ROOT/.pre-commit-hooks.yaml")
check ".pre-commit-hooks.yaml's entry is the lint command ($entry)" test "$entry" = "gpu-scheduler lint"
check "the hook's command on several files: exit 1 for the bad one among them" eval \
	'rc_is 1 env PATH="$(dirname "$GS_DAEMON_BIN"):$PATH" $entry "$FX/good.yaml" "$FX/bad-map.yaml" "$GS_ROOT/deploy/examples/gpu-scheduler-check.yaml"'

test_end
