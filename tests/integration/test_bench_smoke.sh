#!/usr/bin/env bash
# bench-smoke: the load generator works end to end on the test cluster (fake nodes, pending pods in
# the mixed shape, the raw binder and gpu-scheduler, protobuf then JSON, in turn) and every contender's outcome is right:
# all pods that can bind are bound where their map says, the ones naming missing nodes are not. The
# gang shape and the ref shape (maps in GPUPlacementMaps) at small sizes too.
# Then the webhook bench: AdmissionReviews straight to the daemon and pod creates through the
# apiserver with and without the webhook, every answer and every created pod checked.
# It asserts correctness only, never a speed (speed is docs/performance.md's business).
. "$(dirname "$0")/../lib.sh"
test_begin
out=$GS_TEST_LOGS/$T_NAME
rm -rf "$out"
check "bench-smoke: 150 pods, 10 nodes, mixed shape, raw and gpu-scheduler (protobuf, then JSON)" \
	"$GS_BUILD_DIR/gpu-scheduler-bench" --kubeconfig "$KUBECONFIG" --nodes 10 --pods 150 --shape mixed \
	--contenders raw,gpu-scheduler --encoding protobuf,json --daemon "$GS_DAEMON_BIN" --out "$out"
check "results.json written, the three runs ok (raw, gpu-scheduler, gpu-scheduler-json)" python3 -c '
import json, sys
c = {x["name"]: x["ok"] for x in json.load(open(sys.argv[1]))["contenders"]}
sys.exit(c != {"raw": True, "gpu-scheduler": True, "gpu-scheduler-json": True})' "$out/results.json"
check "bound.csv written" test -s "$out/bound.csv"
# Its ready time comes from its own log: positive, and shorter than its whole run.
check "gpu-scheduler's ready time measured (0 < ready_s < seconds)" python3 -c '
import json, sys
g = [c for c in json.load(open(sys.argv[1]))["contenders"] if c["name"] == "gpu-scheduler"][0]
sys.exit(not (g["ready_s"] is not None and 0 < g["ready_s"] < g["seconds"]))' "$out/results.json"
# The apiserver's own counters: the raw binder sent exactly one Binding per pod that can bind;
# gpu-scheduler at least that many, and a Scheduled event for each (events are on by default).
check "apiserver_requests: one binding per pod (raw), bindings and events (gpu-scheduler)" python3 -c '
import json, sys
c = {x["name"]: x for x in json.load(open(sys.argv[1]))["contenders"]}
raw, g = c["raw"], c["gpu-scheduler"]
sys.exit(not (raw["apiserver_requests"].get("POST pods/binding") == raw["expected"]
              and g["apiserver_requests"].get("POST pods/binding", 0) >= g["expected"]
              and g["apiserver_requests"].get("POST events", 0) >= g["expected"]))' "$out/results.json"
check "the raw binder has no ready time" grep -q '"name":"raw"[^}]*"ready_s":null' "$out/results.json"
check "the fake nodes are gone" eval "! NS= kc get nodes -o name | grep -q 'node/bn-'"

# One all-or-nothing gang of 20 members (--shape gang): the contender runs first, 19 members come, then
# the last 1.5 s later. Every member must end bound where its map says and none before the last member's
# create was sent (the bench fails the run otherwise: ok false). The raw binder binds them all once the
# last exists; gpu-scheduler must hold them (its log: the gang committed once, all 20 together).
gout=$GS_TEST_LOGS/$T_NAME-gang
rm -rf "$gout"
check "bench-smoke: a 20-member all-or-nothing gang on 10 nodes, raw and gpu-scheduler (protobuf, then JSON)" \
	"$GS_BUILD_DIR/gpu-scheduler-bench" --kubeconfig "$KUBECONFIG" --nodes 10 --pods 20 --shape gang --gang-hold 1500 \
	--contenders raw,gpu-scheduler --encoding protobuf,json --daemon "$GS_DAEMON_BIN" --out "$gout"
check "gang: every member bound, none before the last member existed (raw, gpu-scheduler, gpu-scheduler-json)" python3 -c '
import json, sys
c = {x["name"]: x for x in json.load(open(sys.argv[1]))["contenders"]}
sys.exit(not (sorted(c) == ["gpu-scheduler", "gpu-scheduler-json", "raw"]
              and all(x["ok"] and x["bound"] == x["expected"] == 20 and x["gang"]["members"] == 20
                      and x["gang"]["bound_before_last"] == 0
                      and x["gang"]["first_bound_ms"] > -x["gang"]["last_create_ms"]
                      for x in c.values())))' "$gout/results.json"
for enc in gpu-scheduler gpu-scheduler-json; do
	check "gang: $enc committed the gang once, 20 members" \
		equals 1 grep -c 'gang gsb-[^ ]*/ConfigMap gang: committing 20 members' "$gout/$enc.log"
done
check "the fake nodes are gone (gang)" eval "! NS= kc get nodes -o name | grep -q 'node/bn-'"

# Maps by reference (--shape ref): 150 pods naming one GPUPlacementMap g0 that holds their 150 entries,
# no map text on the pods. The bench installs the CRD when the cluster lacks it (and deletes it after).
# ok: every pod bound, each to the node its entry in the object names (the raw binder puts them there
# without reading any map; gpu-scheduler can only have read the object).
rout=$GS_TEST_LOGS/$T_NAME-ref
rm -rf "$rout"
check "bench-smoke: 150 pods referencing one GPUPlacementMap on 10 nodes, raw and gpu-scheduler" \
	"$GS_BUILD_DIR/gpu-scheduler-bench" --kubeconfig "$KUBECONFIG" --nodes 10 --pods 150 --shape ref \
	--contenders raw,gpu-scheduler --encoding protobuf --daemon "$GS_DAEMON_BIN" \
	--crd "$GS_ROOT/deploy/crd/gpuplacementmaps.yaml" --out "$rout"
check "ref: every pod bound where its object maps it (raw, gpu-scheduler)" python3 -c '
import json, sys
c = {x["name"]: x for x in json.load(open(sys.argv[1]))["contenders"]}
sys.exit(not (sorted(c) == ["gpu-scheduler", "raw"] and json.load(open(sys.argv[1]))["shape"] == "ref"
              and all(x["ok"] and x["bound"] == x["expected"] == 150 for x in c.values())))' "$rout/results.json"
check "ref: gpu-scheduler listed the object before the pods" \
	grep -q 'gpuplacementmaps: listed [1-9]' "$rout/gpu-scheduler.log"
check "the fake nodes are gone (ref)" eval "! NS= kc get nodes -o name | grep -q 'node/bn-'"

wout=$GS_TEST_LOGS/$T_NAME-webhook
rm -rf "$wout"
check "webhook bench: 300 reviews at 200/s and closed loop, 4 x 40 pod creates" \
	"$GS_BUILD_DIR/gpu-scheduler-webhook-bench" --kubeconfig "$KUBECONFIG" --requests 300 --rate 200 --conns 4 \
	--pods 40 --create-conns 8 --daemon "$GS_DAEMON_BIN" --port "$(free_port)" --health-port "$(free_port)" --out "$wout"
check "webhook.json: six phases, every request answered as expected" python3 -c '
import json, sys
ph = json.load(open(sys.argv[1]))["phases"]
sys.exit(not (len(ph) == 6 and all(p["bad"] == 0 and p["ok"] == p["n"] for p in ph)
              and [p["n"] for p in ph] == [300, 300, 40, 40, 40, 40]))' "$wout/webhook.json"
# The daemon saw the apiserver's calls: every create in the webhook's namespaces, none elsewhere.
check "webhook.json: the daemon reviewed the creates in the webhook's namespaces only" python3 -c '
import json, sys
ph = json.load(open(sys.argv[1]))["phases"]
sys.exit(not ([p["server_reviews"] >= p["n"] for p in ph[3:5]] == [True, True] and ph[2]["server_reviews"] == 0
              and ph[5]["server_reviews"] == 0))' "$wout/webhook.json"
check "the server-side p99 was read from the daemon's histogram" \
	grep -q '"name":"direct, open loop 200/s"[^}]*"server_p99_le_ms":[0-9]' "$wout/webhook.json"
check "the bench's webhook configuration is gone" \
	eval "! NS= kc get mutatingwebhookconfigurations -o name | grep -q gpu-scheduler-webhook-bench"
check "its daemon is gone" eval "! pgrep -f -- '--out $wout' >/dev/null && ! pgrep -f 'tls-cert-file=$wout/' >/dev/null"
test_end
