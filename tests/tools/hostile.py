#!/usr/bin/env python3
"""tests/tools/hostile.py: idle and slow clients against one of our ports, for tests/integration/test_hostile.sh.

    hostile.py MODE --port PORT --conns N --seconds S [--tls] [--interval SEC] [--source 127.X.Y.Z]

MODE idle: each connection connects (and with --tls finishes the TLS handshake), then sends nothing.
MODE slowloris: each connection sends an HTTP request head one byte every --interval seconds (2),
never finishing it.

The attacker tries to keep N connections open to 127.0.0.1:PORT for S seconds: a connection the
server closes (or that fails) is opened again after --reconnect-delay seconds (0.1). --source binds the
attacker's sockets to another loopback address, as a pod's own IP differs from the apiserver's. Bounded on
purpose: loopback only, N <= 5000, S <= 300. Prints one line at the end, e.g.
    attempts=2731 opened=2731 closed_by_server=731 max_open=2000 failed=0
(attempts: connections tried; opened: established, TLS handshake included; max_open: the most it held
at once, so a test can tell the attack filled the cap).
"""
import argparse
import asyncio
import ssl
import sys
import time

HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris\r\n" + b"X-Pad: " + b"a" * 4000


class Stats:
    def __init__(self):
        self.attempts = 0
        self.opened = 0
        self.closed_by_server = 0
        self.failed = 0
        self.open = 0
        self.max_open = 0


async def one(args, ctx, stats, deadline):
    """One slot: connect, hold, and when the server closes, connect again until the deadline."""
    while time.monotonic() < deadline:
        stats.attempts += 1
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", args.port, ssl=ctx, local_addr=args.local_addr,
                                        ssl_handshake_timeout=10 if ctx else None),
                timeout=10)
        except (OSError, asyncio.TimeoutError, ssl.SSLError):
            stats.failed += 1
            await asyncio.sleep(args.reconnect_delay)
            continue
        stats.opened += 1
        stats.open += 1
        stats.max_open = max(stats.max_open, stats.open)
        try:
            sent = 0
            while time.monotonic() < deadline:
                if args.mode == "slowloris" and sent < len(HEAD):
                    writer.write(HEAD[sent:sent + 1])
                    sent += 1
                    await writer.drain()
                wait = args.interval if args.mode == "slowloris" else deadline - time.monotonic()
                try:
                    data = await asyncio.wait_for(reader.read(4096), timeout=max(wait, 0.01))
                except asyncio.TimeoutError:
                    continue
                if not data:
                    stats.closed_by_server += 1
                    break
                # An answer (408 ...) is read and the connection held until the server closes it.
        except (OSError, ssl.SSLError):
            stats.closed_by_server += 1
        finally:
            stats.open -= 1
            writer.transport.abort()
        await asyncio.sleep(args.reconnect_delay)


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["idle", "slowloris"])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--conns", type=int, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--tls", action="store_true")
    p.add_argument("--interval", type=float, default=2.0)
    p.add_argument("--reconnect-delay", type=float, default=0.1)
    p.add_argument("--source", default=None)
    args = p.parse_args()
    if not 0 < args.conns <= 5000 or not 0 < args.seconds <= 300:
        sys.exit("hostile.py: --conns must be 1..5000 and --seconds 1..300")
    if args.source is not None and not args.source.startswith("127."):
        sys.exit("hostile.py: --source must be a loopback address (127.x.y.z)")
    args.local_addr = (args.source, 0) if args.source else None
    ctx = None
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    stats = Stats()
    deadline = time.monotonic() + args.seconds
    tasks = [asyncio.ensure_future(one(args, ctx, stats, deadline)) for _ in range(args.conns)]
    await asyncio.wait(tasks, timeout=args.seconds + 15)
    for t in tasks:
        t.cancel()
    print(f"attempts={stats.attempts} opened={stats.opened} closed_by_server={stats.closed_by_server} max_open={stats.max_open} "
          f"failed={stats.failed}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
