#!/usr/bin/env python3
"""faultlog.py LOG: reads faultproxy.py's log and prints shell assignments (for eval) about what the
daemon did after each injected fault. Times are the proxy's monotonic clock: a fault's time is when its
answer went back, a retry's when its request arrived.

  F_BIND_429 F_BIND_500 F_LW     injected: 429s and 500s to bindings, faults to lists and watches
  F_UNRETRIED                    injected binding faults after which the same pod never came back
  F_EARLY                        retries that came before the Retry-After of the 429 before them
  F_MIN_RA_MS                    the shortest wait after a 429 with Retry-After, in ms (-1: none)
  F_RA_S                         that Retry-After, in seconds
  F_LW_EARLY                     list/watch requests of a resource sooner than the Retry-After before
  F_GAP1_MS F_GAP2_MS F_GAP3_MS  mean wait after the 1st, 2nd, 3rd 500 in a row of a pod (-1: none)
  F_MIN1_MS F_MIN2_MS F_MIN3_MS  the shortest of those waits
  F_BELOW_FLOOR                  waits after the k-th 500 in a row shorter than the daemon's backoff
                                 floor for it: half its ceiling, 100 ms x 2^(k-1) (the engine's backoff
                                 is uniform in [ceiling/2, ceiling], the ceiling doubling from 200 ms)
Means mix the backoff with the wait for a free binding slot (--max-inflight-binds), which is longest
at the start of a burst; the floors and the shortest waits show the backoff itself.
  F_PODS_201 F_TWICE             pods with a binding the apiserver accepted; pods with more than one
"""
import re
import sys

LINE = re.compile(r"^(\d+\.\d+) \S+ conn=\d+ (\S+) (\S+) in=(\d+\.\d+) status=(\d+) injected=([01])(.*)$")


def main(path):
    binds = {}  # pod -> [(in, out, status, injected, retry_after)]
    lw = {}     # resource -> [(in, out, status, injected, retry_after)]
    for line in open(path):
        m = LINE.match(line.strip())
        if not m:
            continue
        out, method, _, t_in, status, inj, rest = m.groups()
        kv = dict(x.split("=", 1) for x in rest.split() if "=" in x)
        rec = (float(t_in), float(out), int(status), inj == "1", int(kv.get("retry_after", 0)))
        kind = kv.get("kind", "")
        if kind == "bind" and method == "POST":
            binds.setdefault(kv["pod"], []).append(rec)
        elif ":" in kind:
            lw.setdefault(kind.split(":")[1], []).append(rec)
    r = dict(F_BIND_429=0, F_BIND_500=0, F_LW=0, F_UNRETRIED=0, F_EARLY=0, F_MIN_RA_MS=-1, F_RA_S=0,
             F_LW_EARLY=0, F_BELOW_FLOOR=0, F_PODS_201=0, F_TWICE=0)
    gaps = {1: [], 2: [], 3: []}
    for pod, recs in binds.items():
        ok = len([x for x in recs if x[2] == 201])
        r["F_PODS_201"] += ok > 0
        r["F_TWICE"] += ok > 1
        run = 0
        for i, (t_in, out, st, inj, ra) in enumerate(recs):
            if not inj:
                run = 0
                continue
            r["F_BIND_429" if st == 429 else "F_BIND_500"] += 1
            if i + 1 >= len(recs):
                r["F_UNRETRIED"] += 1
                continue
            gap = (recs[i + 1][0] - out) * 1000
            if ra:
                r["F_RA_S"] = ra
                if r["F_MIN_RA_MS"] < 0 or gap < r["F_MIN_RA_MS"]:
                    r["F_MIN_RA_MS"] = int(gap)
                if gap < ra * 1000 - 5:  # 5 ms: the daemon's loop clock counts whole milliseconds
                    r["F_EARLY"] += 1
                run = 0
                continue
            run += 1
            if run in gaps:
                gaps[run].append(gap)
            if gap < 100 * 2 ** (run - 1) - 5:  # 5 ms: the daemon's loop clock counts whole milliseconds
                r["F_BELOW_FLOOR"] += 1
    for res, recs in lw.items():
        for i, (t_in, out, st, inj, ra) in enumerate(recs):
            if not inj:
                continue
            r["F_LW"] += 1
            if ra and i + 1 < len(recs) and (recs[i + 1][0] - out) * 1000 < ra * 1000 - 5:
                r["F_LW_EARLY"] += 1
    for k in (1, 2, 3):
        r["F_GAP%d_MS" % k] = int(sum(gaps[k]) / len(gaps[k])) if gaps[k] else -1
        r["F_MIN%d_MS" % k] = int(min(gaps[k])) if gaps[k] else -1
    for k, v in r.items():
        print("%s=%s" % (k, v))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
