#!/usr/bin/env python3
"""faultproxy.py: a TLS proxy in front of kube-apiserver that answers some requests itself with 429 or
500, for tests/chaos/chaos_apiserver_faults.sh.

  faultproxy.py --listen PORT --upstream HOST:PORT --cert CRT --key KEY --ca CA --log FILE
                [--bind-429 F] [--bind-500 F] [--bind-500-times K] [--retry-after N]
                [--watch-faults N] [--seed S]

It terminates TLS with CRT/KEY (a certificate the cluster CA signed for 127.0.0.1), opens one TLS
connection to the apiserver (verified with CA) per client connection, and relays HTTP/1.1 requests one
at a time: Content-Length and chunked bodies both ways, so watch streams pass as they come.

Faults, decided per pod so a run is reproducible (random.Random(SEED + pod name)):
  binding POSTs (.../pods/NAME/binding): a share F of the pods (--bind-429) get 429 Too Many Requests
      with Retry-After: N (--retry-after, default 2) on their first attempt; another share (--bind-500)
      get 500 on their first K attempts (--bind-500-times, default 3). Neither reaches the apiserver.
  list and watch GETs of pods and nodes: the first N of them (--watch-faults) after the first list of
      each resource get 429 with Retry-After: N (every second one) or 500.

The log has one line per request, space-separated key=value after a timestamp (seconds, monotonic,
then wall clock), taken just before the answer's head is written back, so no client can have had
the answer earlier:
  T WALL conn=C METHOD PATH in=T0 status=S injected=0|1 [retry_after=N] [pod=NS/NAME] [kind=...]
where T0 is when the request's head arrived (the same monotonic clock as T).
Faults are also written to stderr.
"""
import argparse
import asyncio
import random
import ssl
import sys
import time
import re

BIND_RE = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/?]+)/binding")
LW_RE = re.compile(r"^/api/v1/(pods|nodes)(\?|$)")

A = None
LOG = None
attempts = {}        # pod -> binding attempts seen
lists_seen = {}      # resource -> list/watch GETs seen
lw_faults = 0
conn_ids = 0


def log(line, t=None):
    LOG.write("%.3f %s %s\n" % (t if t is not None else time.monotonic(), time.strftime("%H:%M:%S", time.gmtime()),
                                 line))
    LOG.flush()


def status_body(code, reason, message):
    return ('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%s",'
            '"reason":"%s","code":%d}' % (message, reason, code)).encode()


def decide(method, path):
    """(status, retry_after, kind, pod) for a fault to inject, or (0, ...) to forward."""
    global lw_faults
    m = BIND_RE.match(path)
    if method == "POST" and m:
        pod = "%s/%s" % (m.group(1), m.group(2))
        n = attempts[pod] = attempts.get(pod, 0) + 1
        r = random.Random("%s/%s" % (A.seed, pod)).random()
        if r < A.bind_429 and n == 1:
            return 429, A.retry_after, "bind", pod
        if A.bind_429 <= r < A.bind_429 + A.bind_500 and n <= A.bind_500_times:
            return 500, 0, "bind", pod
        return 0, 0, "bind", pod
    m = LW_RE.match(path)
    if method == "GET" and m:
        kind = "watch" if "watch=1" in path or "watch=true" in path else "list"
        res = m.group(1)
        seen = lists_seen[res] = lists_seen.get(res, 0) + 1
        if seen > 1 and lw_faults < A.watch_faults:
            lw_faults += 1
            if lw_faults % 2:
                return 429, A.retry_after, kind + ":" + res, None
            return 500, 0, kind + ":" + res, None
        return 0, 0, kind + ":" + res, None
    return 0, 0, None, None


async def read_head(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for h in lines[1:]:
        if ":" in h:
            k, v = h.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return head, lines[0], headers


async def relay_body(reader, writer, headers):
    """Copies one message body (Content-Length or chunked) from reader to writer."""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            line = await reader.readuntil(b"\r\n")
            writer.write(line)
            size = int(line.split(b";")[0].strip(), 16)
            if size == 0:
                while True:  # trailers, then the empty line
                    t = await reader.readuntil(b"\r\n")
                    writer.write(t)
                    if t == b"\r\n":
                        break
                await writer.drain()
                return
            writer.write(await reader.readexactly(size + 2))
            await writer.drain()
    n = int(headers.get("content-length", "0"))
    while n > 0:
        chunk = await reader.read(min(n, 65536))
        if not chunk:
            raise asyncio.IncompleteReadError(b"", n)
        writer.write(chunk)
        n -= len(chunk)
    await writer.drain()


async def handle(creader, cwriter):
    global conn_ids
    conn_ids += 1
    cid = conn_ids
    host, port = A.upstream.rsplit(":", 1)
    uctx = ssl.create_default_context(cafile=A.ca)
    ureader = uwriter = None
    try:
        while True:
            try:
                head, reqline, headers = await read_head(creader)
            except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
                return
            t_in = time.monotonic()
            method, path = reqline.split(" ")[0], reqline.split(" ")[1]
            status, retry_after, kind, pod = decide(method, path)
            if status:
                # Drain the request body, then answer it ourselves.
                class Sink:
                    def write(self, b):
                        pass

                    async def drain(self):
                        pass
                await relay_body(creader, Sink(), headers)
                body = status_body(status, "TooManyRequests" if status == 429 else "InternalError",
                                   "injected by faultproxy")
                resp = "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n" % (
                    status, "Too Many Requests" if status == 429 else "Internal Server Error", len(body))
                if retry_after:
                    resp += "Retry-After: %d\r\n" % retry_after
                t_ans = time.monotonic()  # before the write: the daemon cannot have the answer sooner
                cwriter.write(resp.encode() + b"\r\n" + body)
                await cwriter.drain()
                line = "conn=%d %s %s in=%.3f status=%d injected=1%s%s kind=%s" % (
                    cid, method, path, t_in, status, " retry_after=%d" % retry_after if retry_after else "",
                    " pod=" + pod if pod else "", kind)
                log(line, t_ans)
                sys.stderr.write("faultproxy: " + line + "\n")
                continue
            if uwriter is None:
                ureader, uwriter = await asyncio.open_connection(host, int(port), ssl=uctx, server_hostname=host)
            uwriter.write(head)
            await relay_body(creader, uwriter, headers)
            rhead, statusline, rheaders = await read_head(ureader)
            t_ans = time.monotonic()
            cwriter.write(rhead)
            await cwriter.drain()
            log("conn=%d %s %s in=%.3f status=%s injected=0%s%s" % (cid, method, path, t_in, statusline.split(" ")[1],
                                                             " pod=" + pod if pod else "",
                                                             " kind=" + kind if kind else ""), t_ans)
            await relay_body(ureader, cwriter, rheaders)
            if rheaders.get("connection", "").lower() == "close":
                return
    except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError, OSError, ValueError):
        return
    finally:
        for w in (cwriter, uwriter):
            if w is not None:
                w.close()


async def main():
    global A, LOG
    p = argparse.ArgumentParser()
    p.add_argument("--listen", type=int, required=True)
    p.add_argument("--upstream", required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--bind-429", type=float, default=0.0)
    p.add_argument("--bind-500", type=float, default=0.0)
    p.add_argument("--bind-500-times", type=int, default=3)
    p.add_argument("--retry-after", type=int, default=2)
    p.add_argument("--watch-faults", type=int, default=0)
    p.add_argument("--seed", default="1")
    A = p.parse_args()
    LOG = open(A.log, "a")
    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    sctx.minimum_version = ssl.TLSVersion.TLSv1_2
    sctx.load_cert_chain(A.cert, A.key)
    server = await asyncio.start_server(handle, "127.0.0.1", A.listen, ssl=sctx)
    log("listening port=%d upstream=%s" % (A.listen, A.upstream))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
