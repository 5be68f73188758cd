#!/usr/bin/env python3
"""apireq.py: sends the requests read from stdin (as they come) to the apiserver, THREADS at a time, at
most RATE per second (0: unlimited), and prints one line "ok N failed N" at the end (failures on stderr, the first 5).

    python3 tests/tools/apireq.py [--threads 8] [--rate 0] < REQUESTS

Each input line is one request: METHOD PATH CONTENT-TYPE BODY (the body is the rest of the line, may
be empty; CONTENT-TYPE "-" for none). The apiserver, its CA and the admin token come from the test
cluster's environment (GS_APISERVER_URL, GS_CLUSTER_CA, GS_CLUSTER_DIR/admin.token). Loopback only; a
bounded number of requests (the lines given), each with a 30 s timeout. Exit status 1 when any failed.
"""
import http.client
import os
import ssl
import sys
import threading
import time
import urllib.parse


def main():
    threads, rate = 8, 0.0
    args = sys.argv[1:]
    while args:
        if args[0] == "--threads":
            threads = int(args[1])
        elif args[0] == "--rate":
            rate = float(args[1])
        else:
            sys.exit("usage: apireq.py [--threads N] [--rate PER_SECOND] < REQUESTS")
        args = args[2:]
    url = urllib.parse.urlsplit(os.environ["GS_APISERVER_URL"])
    ctx = ssl.create_default_context(cafile=os.environ["GS_CLUSTER_CA"])
    with open(os.path.join(os.environ["GS_CLUSTER_DIR"], "admin.token")) as f:
        token = f.read().strip()
    lock = threading.Lock()
    state = {"next": 0, "ok": 0, "failed": 0, "errors": []}
    t0 = time.monotonic()

    # Lines are read as they come (a test may write them while it does something else), one at a time.
    def take():
        with lock:
            while True:
                line = sys.stdin.readline()
                if not line:
                    return None
                if line.strip():
                    break
            i = state["next"]
            state["next"] = i + 1
        if rate > 0:
            due = t0 + i / rate
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
        return line.rstrip("\n")

    def worker():
        conn = None
        while (line := take()) is not None:
            parts = line.split(" ", 3)
            method, path, ctype = parts[0], parts[1], parts[2]
            body = parts[3].encode() if len(parts) > 3 else None
            headers = {"Authorization": "Bearer " + token}
            if ctype != "-":
                headers["Content-Type"] = ctype
            err = None
            for _ in range(2):  # one reconnect when a kept-alive connection was closed
                try:
                    if conn is None:
                        conn = http.client.HTTPSConnection(url.hostname, url.port, context=ctx, timeout=30)
                    conn.request(method, path, body=body, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    err = None if 200 <= resp.status < 300 else "%d %s" % (resp.status, data[:200])
                    break
                except (OSError, http.client.HTTPException) as e:
                    err = repr(e)
                    conn.close()
                    conn = None
            with lock:
                if err is None:
                    state["ok"] += 1
                else:
                    state["failed"] += 1
                    if len(state["errors"]) < 5:
                        state["errors"].append("%s %s: %s" % (method, path, err))
        if conn is not None:
            conn.close()

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for e in state["errors"]:
        print(e, file=sys.stderr)
    print("ok %d failed %d" % (state["ok"], state["failed"]))
    sys.exit(1 if state["failed"] else 0)


main()
