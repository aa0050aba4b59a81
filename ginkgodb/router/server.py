"""The router's listener: asyncio streams around the sans-IO wire codec, commands in threads.

Requests on one connection run one at a time and in order (MongoDB's contract); each runs in the
thread pool, since a routed command waits on shards.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import socket
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

from ..wire import ProtocolError, WireConnection
from .balancer import Balancer
from .dispatch import dispatch
from .state import ORPHAN_CLEANUP_DELAY, Router

log = logging.getLogger("ginkgodb.router")


async def _serve_connection(router: Router, pool: ThreadPoolExecutor, reader: asyncio.StreamReader,
                            writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    wire = WireConnection()
    loop = asyncio.get_running_loop()
    try:
        while True:
            data = await reader.read(1 << 16)
            if not data:
                return
            wire.receive_data(data)
            while True:
                try:
                    request = wire.next_request()
                except ProtocolError as exc:
                    out = wire.encode_error(exc)
                    if out:
                        writer.write(out)
                    if exc.fatal:
                        return
                    continue
                if request is None:
                    break
                reply = await loop.run_in_executor(pool, dispatch, router, request.command)
                out = wire.encode_reply(request, reply)
                if out:
                    writer.write(out)
                    await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        return
    finally:
        writer.close()


async def serve(etcd_url: str, port: int, bind: str = "127.0.0.1", balancer_interval: float = 10.0,
                orphan_cleanup_delay: float = ORPHAN_CLEANUP_DELAY, ready: Optional[asyncio.Event] = None) -> None:
    router = Router(etcd_url, balancer_interval=balancer_interval, orphan_cleanup_delay=orphan_cleanup_delay)
    pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="router")
    balancer = Balancer(router, balancer_interval)
    router.balancer = balancer   # type: ignore[attr-defined]
    balancer.start()
    server = await asyncio.start_server(lambda r, w: _serve_connection(router, pool, r, w), bind, port,
                                        reuse_address=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    log.info("router listening on %s:%d (etcd %s)", bind, port, etcd_url)
    print(f"ginkgodb router listening on {bind}:{port}", flush=True)
    if ready is not None:
        ready.set()
    async with server:
        await stop.wait()
    balancer.stop()
    server.close()
    pool.shutdown(wait=False, cancel_futures=True)
    router.close()


def run(etcd_url: str, port: int, bind: str = "127.0.0.1", balancer_interval: float = 10.0,
        orphan_cleanup_delay: float = ORPHAN_CLEANUP_DELAY) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    asyncio.run(serve(etcd_url, port, bind, balancer_interval, orphan_cleanup_delay))
    return 0
