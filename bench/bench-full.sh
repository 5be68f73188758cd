#!/usr/bin/env bash
# make bench-full: the scale sweep of issue 5. Each configuration runs bench/bench.sh on a
# fresh control plane (so etcd's size never carries over), then one table summarises them all.
#
#   bench/bench-full.sh [OUT]     (default build/bench-full; about 25 minutes on 2 cores)
#
# Configurations: 1k, 5k, 10k, 20k pending pods on 1,000 nodes and 10k on 100 nodes, each with the
# Scheduled event on and off; contenders raw binder and gpu-scheduler, plus kube-scheduler at QPS
# 10000 for 10k pods / 1k nodes with events on (the issue's reference point). GS_SWEEP="PODS:NODES ..."
# replaces the list of configurations.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/bench-full}
SWEEP=${GS_SWEEP:-"1000:1000 5000:1000 10000:1000 20000:1000 10000:100"}
mkdir -p "$OUT"

for cfg in $SWEEP; do
	pods=${cfg%%:*}
	nodes=${cfg##*:}
	for ev in true false; do
		contenders=raw,gpu-scheduler
		[ "$pods:$nodes:$ev" = 10000:1000:true ] && contenders=raw,gpu-scheduler,kube-scheduler-qps
		dir=$OUT/p$pods-n$nodes-ev$ev
		echo "=== bench-full: $pods pods, $nodes nodes, events $ev ($contenders)" >&2
		bench/bench.sh --nodes "$nodes" --pods "$pods" --contenders "$contenders" \
			--events="$ev" --out "$dir" >"$dir.txt" 2>"$dir.err" || {
			echo "bench-full: $dir failed (see $dir.err)" >&2
			continue
		}
		tail -n 6 "$dir.txt" >&2
	done
done

# One line per configuration: raw's throughput, gpu-scheduler's figures, and its time per pod
# relative to the 1k-pod run with the same nodes and events setting (flat cost = ~1.0).
python3 - "$OUT" <<'PY' | tee "$OUT/summary.md"
import json, os, sys
out = sys.argv[1]
rows = []
for d in sorted(os.listdir(out)):
    f = os.path.join(out, d, "results.json")
    if not os.path.isfile(f):
        continue
    r = json.load(open(f))
    c = {x["name"]: x for x in r["contenders"]}
    if "gpu-scheduler" not in c or "raw" not in c:
        continue
    rows.append((r["pods"], r["nodes"], r["events"], c))
rows.sort(key=lambda x: (x[1], not x[2], x[0]))
base = {}
print("| pods | nodes | events | raw pods/s | gpu-scheduler pods/s | x raw | x kube-scheduler QPS 10000 "
      "| CPU us/pod | KiB in/pod | peak RSS MiB | ready s | p99 ms | us per pod (wall) | vs 1k pods |")
print("|-----:|------:|:------:|-----:|-----:|-----:|-----:|-----:|-----:|-----:|-----:|-----:|-----:|-----:|")
for pods, nodes, ev, c in rows:
    g, raw = c["gpu-scheduler"], c["raw"]
    per = g["seconds"] / pods * 1e6
    if pods == 1000:
        base[(nodes, ev)] = per
    b = base.get((nodes, ev))
    ks = c.get("kube-scheduler-qps")
    ready = "%.3f" % g["ready_s"] if g.get("ready_s") is not None else "-"
    print("| %d | %d | %s | %.0f | %.0f | %.2f | %s | %.0f | %.1f | %.1f | %s | %.0f | %.0f | %s |" % (
        pods, nodes, "on" if ev else "off", raw["pods_per_s"], g["pods_per_s"],
        g["pods_per_s"] / raw["pods_per_s"] if raw["pods_per_s"] else 0,
        "%.2f" % (g["pods_per_s"] / ks["pods_per_s"]) if ks else "-",
        g["cpu_us_per_pod"], g.get("read_bytes", 0) / 1024 / max(g["bound"], 1), g["peak_rss_kb"] / 1024, ready,
        g["p99_ms"], per,
        "%.2f" % (per / b) if b else "-"))
PY
