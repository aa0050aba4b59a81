"""The router's listener: a thread per client connection around the sans-IO wire codec.

Requests on one connection run one at a time and in order (MongoDB's contract). A routed
command waits on shards, so each connection has its own thread that reads a request, runs it
and writes the reply itself (as mongos serves a connection on its own thread): no hand-off
between an event loop and a worker pool, which cost more than a targeted read itself (the
loop's wake-ups and the GIL's switch interval; bench/sharding.py measured a targeted read at
2.5x a direct one with the hand-off, docs/design/sharding.md).
"""
from __future__ import annotations

import itertools
import logging
import signal
import socket
import threading
from typing import Optional

from ..limits import MAX_MESSAGE_SIZE
from ..wire import ProtocolError, WireConnection, parse_frame
from ..wire.framing import FrameBuffer
from . import passthrough
from .balancer import Balancer
from .dispatch import dispatch
from .state import ORPHAN_CLEANUP_DELAY, Router

log = logging.getLogger("ginkgodb.router")
RECV_BYTES = 1 << 16
ACCEPT_POLL = 0.5   # seconds between checks of the stop flag while no client connects


def serve_connection(router: Router, sock: socket.socket) -> None:
    """Serve one client connection until it closes (runs on the connection's own thread). A read
    one shard answers whole is forwarded as bytes (passthrough.py); every other request is
    decoded and dispatched."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    wire = WireConnection()
    frames = FrameBuffer(MAX_MESSAGE_SIZE)
    reply_ids = itertools.count(1 << 30)   # the passthrough's replies (the codec numbers its own from 1)
    try:
        while True:
            data = sock.recv(RECV_BYTES)
            if not data:
                return
            frames.feed(data)
            while True:
                try:
                    frame = frames.next_frame()
                    if frame is None:
                        break
                    answer = passthrough.answer(router, frame, next(reply_ids) & 0x7FFFFFFF)
                    if isinstance(answer, bytes):
                        sock.sendall(answer)
                        continue
                    request = parse_frame(frame)
                except ProtocolError as exc:
                    out = wire.encode_error(exc)
                    if out:
                        sock.sendall(out)
                    if exc.fatal:
                        return
                    continue
                out = wire.encode_reply(request, answer if answer is not None else dispatch(router, request.command))
                if out:
                    sock.sendall(out)
    except OSError:
        return
    finally:
        sock.close()


def serve(etcd_url: str, port: int, bind: str = "127.0.0.1", balancer_interval: float = 10.0,
          orphan_cleanup_delay: float = ORPHAN_CLEANUP_DELAY, ready: Optional[threading.Event] = None,
          stop: Optional[threading.Event] = None) -> None:
    """Listen until `stop` is set (SIGINT/SIGTERM set it when this runs on the main thread)."""
    router = Router(etcd_url, balancer_interval=balancer_interval, orphan_cleanup_delay=orphan_cleanup_delay)
    balancer = Balancer(router, balancer_interval)
    router.balancer = balancer   # type: ignore[attr-defined]
    balancer.start()
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
    listener = socket.create_server((bind, port), reuse_port=False, backlog=128)
    listener.settimeout(ACCEPT_POLL)
    log.info("router listening on %s:%d (etcd %s)", bind, port, etcd_url)
    print(f"ginkgodb router listening on {bind}:{port}", flush=True)
    if ready is not None:
        ready.set()
    try:
        while not stop.is_set():
            try:
                sock, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if stop.is_set():
                    break
                raise
            sock.settimeout(None)
            threading.Thread(target=serve_connection, args=(router, sock), name="router-conn", daemon=True).start()
    finally:
        listener.close()
        balancer.stop()
        router.close()


def run(etcd_url: str, port: int, bind: str = "127.0.0.1", balancer_interval: float = 10.0,
        orphan_cleanup_delay: float = ORPHAN_CLEANUP_DELAY) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    serve(etcd_url, port, bind, balancer_interval, orphan_cleanup_delay)
    return 0
