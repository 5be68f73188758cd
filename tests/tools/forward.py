#!/usr/bin/env python3
"""forward.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT: a plain TCP relay for tests (reach the
apiserver through an address its certificate does not name). Exits when its parent shell kills it."""
import asyncio
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main(lh, lp, th, tp):
    async def handle(r, w):
        tr, tw = await asyncio.open_connection(th, tp)
        await asyncio.gather(pipe(r, tw), pipe(tr, w))

    server = await asyncio.start_server(handle, lh, lp)
    async with server:
        await server.serve_forever()


asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])))
