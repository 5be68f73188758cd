#!/usr/bin/env bash
# bench-smoke: the load generator works end to end on the test cluster (fake nodes, pending pods in
# the mixed shape, the raw binder and gpu-scheduler in turn) and every contender's outcome is right:
# all pods that can bind are bound where their map says, the ones naming missing nodes are not.
# It asserts correctness only, never a speed (speed is docs/performance.md's business).
. "$(dirname "$0")/../lib.sh"
test_begin
out=$GS_TEST_LOGS/$T_NAME
rm -rf "$out"
check "bench-smoke: 150 pods, 10 nodes, mixed shape, raw and gpu-scheduler" \
	"$GS_BUILD_DIR/gpu-scheduler-bench" --kubeconfig "$KUBECONFIG" --nodes 10 --pods 150 --shape mixed \
	--contenders raw,gpu-scheduler --daemon "$GS_DAEMON_BIN" --out "$out"
check "results.json written, both contenders ok" \
	eval "[ \"\$(grep -o '\"ok\":true' '$out/results.json' | wc -l)\" = 2 ]"
check "bound.csv written" test -s "$out/bound.csv"
# Its ready time comes from its own log: positive, and shorter than its whole run.
check "gpu-scheduler's ready time measured (0 < ready_s < seconds)" python3 -c '
import json, sys
g = [c for c in json.load(open(sys.argv[1]))["contenders"] if c["name"] == "gpu-scheduler"][0]
sys.exit(not (g["ready_s"] is not None and 0 < g["ready_s"] < g["seconds"]))' "$out/results.json"
check "the raw binder has no ready time" grep -q '"name":"raw"[^}]*"ready_s":null' "$out/results.json"
check "the fake nodes are gone" eval "! NS= kc get nodes -o name | grep -q 'node/bn-'"
test_end
