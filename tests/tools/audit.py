#!/usr/bin/env python3
"""audit.py LOG NS [PREFIX COUNT]: what kube-apiserver's audit log (GS_APISERVER_AUDIT=1, tests/cluster/cluster.sh)
says about the bindings of namespace NS, across every restart of the apiserver (the log is appended to;
its counters are not reset like apiserver_request_total).

Prints shell assignments, one per line, for eval:
  AUDIT_POSTS       binding POSTs that completed (stage ResponseComplete)
  AUDIT_201         answered 201 Created
  AUDIT_409         answered 409 Conflict
  AUDIT_OTHER       any other code (5xx while the apiserver stopped, 429, ...)
  AUDIT_PODS_201    pods with at least one 201
  AUDIT_TWICE       pods with more than one 201 (a pod bound twice: must be 0)
  AUDIT_409_ONLY    pods whose only answers were 409 (their 201 was not logged: the apiserver was
                    killed between committing the binding and logging it)
  AUDIT_409_NAMES   the names of the pods with a 409, comma-separated (at most 50)
With PREFIX and COUNT (pods PREFIX-0 .. PREFIX-(COUNT-1)):
  AUDIT_UNRECORDED  those with no completed binding in the log at all: the apiserver was killed after
                    committing their binding and before logging it, and no retry followed (the watch
                    showed the pod bound first)
  AUDIT_UNRECORDED_NAMES  their names, comma-separated (at most 50)
"""
import json
import sys


def main(path, ns, prefix=None, count=0):
    codes = {}
    for line in open(path, errors="replace"):
        try:
            e = json.loads(line)
        except ValueError:
            continue  # a line cut by SIGKILL
        ref = e.get("objectRef", {})
        if (e.get("stage") != "ResponseComplete" or e.get("verb") != "create" or ref.get("resource") != "pods"
                or ref.get("subresource") != "binding" or ref.get("namespace") != ns):
            continue
        codes.setdefault(ref.get("name", ""), []).append(e.get("responseStatus", {}).get("code", 0))
    allc = [c for v in codes.values() for c in v]
    with409 = sorted(n for n, v in codes.items() if 409 in v)
    out = {
        "AUDIT_POSTS": len(allc),
        "AUDIT_201": allc.count(201),
        "AUDIT_409": allc.count(409),
        "AUDIT_OTHER": len([c for c in allc if c not in (201, 409)]),
        "AUDIT_PODS_201": len([n for n, v in codes.items() if 201 in v]),
        "AUDIT_TWICE": len([n for n, v in codes.items() if v.count(201) > 1]),
        "AUDIT_409_ONLY": len([n for n, v in codes.items() if 409 in v and 201 not in v]),
        "AUDIT_409_NAMES": ",".join(with409[:50]),
    }
    if prefix is not None:
        missing = ["%s-%d" % (prefix, i) for i in range(count) if "%s-%d" % (prefix, i) not in codes]
        out["AUDIT_UNRECORDED"] = len(missing)
        out["AUDIT_UNRECORDED_NAMES"] = ",".join(missing[:50])
    for k, v in out.items():
        print("%s=%s" % (k, v))


if __name__ == "__main__":
    if len(sys.argv) == 3:
        main(sys.argv[1], sys.argv[2])
    elif len(sys.argv) == 5:
        main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
