#!/usr/bin/env python3
"""pods.py: many bare pods for the chaos suite, made and checked straight through the apiserver's REST
API (admin token, cluster CA: $GS_APISERVER_URL, $GS_CLUSTER_CA, $GS_CLUSTER_DIR/admin.token).

  pods.py create NS PREFIX FIRST COUNT NODES [GPUS]
      pods PREFIX-FIRST .. PREFIX-(FIRST+COUNT-1), each with a one-line map "I=NODE:DEVICE" where
      NODE = NODES[I mod len] (NODES comma-separated) and DEVICE = (I div len) mod GPUS (default 4),
      and gpu-scheduler.io/allow-shared-devices: "true" (bare pods are each their own owner).
      8 connections in parallel; a refused connection, a reset, 429 or 5xx is retried (the apiserver
      may be down for a while: up to 120 s per pod); 409 AlreadyExists counts as created.
  pods.py delete NS PREFIX FIRST COUNT
      deletes them with gracePeriodSeconds 0 (no kubelet confirms); 404 counts as deleted.
  pods.py verify NS PREFIX NODES [GPUS] [--count N] [--absent FIRST:COUNT]...
      lists the namespace and checks every pod PREFIX-I: bound (spec.nodeName) to the node the map
      above gives it, and the gpu-scheduler.io/assigned annotation NODE:DEVICE. With --count, every
      PREFIX-0 .. PREFIX-(N-1) must exist, except those named in --absent, which must not. Prints one summary line; exit 0 only when every pod is where mapped.
"""
import http.client
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse

URL = urllib.parse.urlparse(os.environ["GS_APISERVER_URL"])
CA = os.environ["GS_CLUSTER_CA"]
TOKEN = open(os.path.join(os.environ["GS_CLUSTER_DIR"], "admin.token")).read().strip()
CTX = ssl.create_default_context(cafile=CA)


def conn():
    return http.client.HTTPSConnection(URL.hostname, URL.port, context=CTX, timeout=30)


def request(c, method, path, body=None):
    """One request, retried over transport failures, 429 and 5xx for up to 120 s: (status, body, conn)."""
    deadline = time.monotonic() + 120
    delay = 0.1
    while True:
        try:
            hdr = {"Authorization": "Bearer " + TOKEN, "Accept": "application/json"}
            if body is not None:
                hdr["Content-Type"] = "application/json"
            c.request(method, path, body=body, headers=hdr)
            r = c.getresponse()
            data = r.read()
            if r.status != 429 and r.status < 500:
                return r.status, data, c
        except (OSError, http.client.HTTPException):
            c.close()
            c = conn()
        if time.monotonic() > deadline:
            raise SystemExit("pods.py: %s %s: apiserver unavailable for 120 s" % (method, path))
        time.sleep(delay)
        delay = min(delay * 2, 2.0)


def placement(i, nodes, gpus):
    return nodes[i % len(nodes)], (i // len(nodes)) % gpus


def pod_body(ns, name, i, nodes, gpus):
    node, dev = placement(i, nodes, gpus)
    return json.dumps({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "chaos"},
                     "annotations": {"gpu-scheduling-map": "%d=%s:%d\n" % (i, node, dev),
                                     "gpu-scheduler.io/allow-shared-devices": "true"}},
        "spec": {"schedulerName": os.environ.get("SCHEDULER_NAME", "gpu-scheduler"),
                 "terminationGracePeriodSeconds": 0,
                 "containers": [{"name": "main", "image": "busybox:stable", "imagePullPolicy": "Never",
                                 "command": ["sleep", "3600"]}]}})


def parallel(indices, work, threads=8):
    errors = []
    lock = threading.Lock()
    it = iter(indices)

    def run():
        c = conn()
        while True:
            with lock:
                i = next(it, None)
            if i is None:
                break
            try:
                c = work(c, i)
            except SystemExit as e:
                errors.append(str(e))
                break

    ts = [threading.Thread(target=run) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        sys.exit(errors[0])


def create(ns, prefix, first, count, nodes, gpus):
    def work(c, i):
        name = "%s-%d" % (prefix, i)
        st, data, c = request(c, "POST", "/api/v1/namespaces/%s/pods" % ns, pod_body(ns, name, i, nodes, gpus))
        if st not in (201, 409):
            raise SystemExit("pods.py: creating %s: HTTP %d: %s" % (name, st, data[:300]))
        return c
    parallel(range(first, first + count), work)


def delete(ns, prefix, first, count):
    body = json.dumps({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})

    def work(c, i):
        name = "%s-%d" % (prefix, i)
        st, data, c = request(c, "DELETE", "/api/v1/namespaces/%s/pods/%s" % (ns, name), body)
        if st not in (200, 202, 404):
            raise SystemExit("pods.py: deleting %s: HTTP %d: %s" % (name, st, data[:300]))
        return c
    parallel(range(first, first + count), work)


def verify(ns, prefix, nodes, gpus, count, absent):
    st, data, _ = request(conn(), "GET", "/api/v1/namespaces/%s/pods" % ns)
    if st != 200:
        sys.exit("pods.py: listing %s: HTTP %d" % (ns, st))
    seen = bound = 0
    bad = []
    names = set()
    for p in json.loads(data)["items"]:
        name = p["metadata"]["name"]
        if not name.startswith(prefix + "-"):
            continue
        i = int(name[len(prefix) + 1:])
        seen += 1
        names.add(i)
        if any(a <= i < a + n for a, n in absent):
            bad.append("%s exists but was deleted" % name)
            continue
        node, dev = placement(i, nodes, gpus)
        got = p["spec"].get("nodeName", "")
        ann = p["metadata"].get("annotations", {}).get("gpu-scheduler.io/assigned", "")
        if got:
            bound += 1
        if got != node or ann != "%s:%d" % (node, dev):
            bad.append("%s on '%s' (assigned '%s'), mapped to %s:%d" % (name, got, ann, node, dev))
    if count is not None:
        missing = [i for i in range(count) if i not in names and not any(a <= i < a + n for a, n in absent)]
        bad += ["%s-%d missing" % (prefix, i) for i in missing]
    print("%d pods %s-*: %d bound, %d not where mapped%s" % (seen, prefix, bound, len(bad),
                                                            (": " + "; ".join(bad[:5])) if bad else ""))
    return 0 if not bad and seen > 0 else 1


def main(a):
    if len(a) >= 6 and a[0] == "create":
        create(a[1], a[2], int(a[3]), int(a[4]), a[5].split(","), int(a[6]) if len(a) > 6 else 4)
        return 0
    if len(a) == 5 and a[0] == "delete":
        delete(a[1], a[2], int(a[3]), int(a[4]))
        return 0
    if len(a) >= 4 and a[0] == "verify":
        absent, rest = [], a[4:]
        gpus, count = 4, None
        while rest:
            if rest[0] == "--absent" and len(rest) > 1:
                f, n = rest[1].split(":")
                absent.append((int(f), int(n)))
                rest = rest[2:]
            elif rest[0] == "--count" and len(rest) > 1:
                count = int(rest[1])
                rest = rest[2:]
            else:
                gpus = int(rest[0])
                rest = rest[1:]
        return verify(a[1], a[2], a[3].split(","), gpus, count, absent)
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
