"""Forwarding a client's request to the worker process that holds its state (`--workers N`).

Each worker also listens on a Unix socket of its own (WorkerSeat.socket_path) and serves the
plain wire protocol there: a forwarded request is the client's message, byte for byte
(compression included), and the replies come back the same way, exhaust streams included
(replies are relayed until one comes without moreToCome). A client connection opens one
channel per sibling it needs, on first use, and keeps it for its life: requests on a
connection run one at a time, so a channel never carries two at once.

When the owner does not answer (it died and is being restarted), opening its channel is tried
again for `CONNECT_PATIENCE` seconds; a request lost in between gets an error reply.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Optional

from ..errors import CommandError, ErrorCode
from ..wire import Request, decode_reply, raw_message, reply_more_to_come
from ..wire.framing import OP_MSG
from ..wire.op_msg import encode_op_msg
from .routing import BROADCAST, GATHER, LOCAL, SPLIT, WorkerSeat, killcursors_owners

#: how long a request waits for a restarting worker's socket (seconds)
CONNECT_PATIENCE = 15.0
_RETRY = 0.05
_log = logging.getLogger("ginkgodb.server")


class Relay:
    """One client connection's channels to its sibling workers."""

    def __init__(self, seat: WorkerSeat) -> None:
        self.seat = seat
        self._channels: dict[int, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}

    async def _channel(self, worker: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        found = self._channels.get(worker)
        if found is not None and not found[1].is_closing():
            return found
        path = self.seat.socket_path(worker)
        loop = asyncio.get_running_loop()
        until = loop.time() + CONNECT_PATIENCE
        while True:
            try:
                found = await asyncio.open_unix_connection(path)
                break
            except OSError:
                if loop.time() > until:
                    raise
                await asyncio.sleep(_RETRY)
        self._channels[worker] = found
        return found

    def _drop(self, worker: int) -> None:
        found = self._channels.pop(worker, None)
        if found is not None:
            found[1].close()

    async def exchange(self, worker: int, message: bytes, answered: bool,
                       deliver: Callable[[bytes], None]) -> None:
        """Send `message` to `worker`; hand each reply to `deliver` (none when not `answered`)."""
        try:
            reader, writer = await self._channel(worker)
            writer.write(message)
            await writer.drain()
            while answered:
                head = await reader.readexactly(4)
                reply = head + await reader.readexactly(int.from_bytes(head, "little", signed=True) - 4)
                deliver(reply)
                answered = reply_more_to_come(reply)
        except BaseException:
            self._drop(worker)   # the stream is out of step: a later request opens a new one
            raise

    async def ask(self, worker: int, message: bytes) -> bytes:
        replies: list[bytes] = []
        await self.exchange(worker, message, True, replies.append)
        return replies[-1]

    def close(self) -> None:
        for worker in list(self._channels):
            self._drop(worker)


_ids = iter(range(1, 1 << 31))


def _decode_reply(message: bytes) -> dict[str, Any]:
    """The document of an OP_MSG reply (compressed or not)."""
    return decode_reply(message)


async def _ask_all(relay: Relay, workers: list[int], message: bytes, answered: bool) -> None:
    """Send to several workers at once; a sibling that fails is logged, not fatal."""
    async def one(worker: int) -> None:
        try:
            await relay.exchange(worker, message, answered, lambda _reply: None)
        except (OSError, asyncio.IncompleteReadError) as exc:
            _log.warning("worker %d did not take a broadcast command: %s", worker, exc)
    await asyncio.gather(*(one(w) for w in workers))


async def forward(relay: Relay, request: Request, target: int, send: Callable[[bytes], None],
                  encode: Callable[[dict], Optional[bytes]]) -> bool:
    """Carry out a routed request. True when the local worker must still run it (BROADCAST:
    the siblings ran it first, so its effect holds everywhere once the reply arrives)."""
    seat = relay.seat
    if target == BROADCAST:
        others = [w for w in range(seat.count) if w != seat.index]
        await _ask_all(relay, others, raw_message(request), not request.more_to_come)
        return True
    if target == GATHER and request.op_code != OP_MSG:
        return True   # a legacy OP_QUERY currentOp: this worker's operations only
    if target in (SPLIT, GATHER):
        reply = await (_split_kill_cursors(relay, request) if target == SPLIT else _gather_current_op(relay, request))
        out = encode(reply)
        if out is not None:
            send(out)
        return False
    try:
        await relay.exchange(target, raw_message(request), not request.more_to_come, send)
    except (OSError, asyncio.IncompleteReadError) as exc:
        out = encode(_lost(request, target, exc).to_reply())
        if out is not None:
            send(out)
    return False


def _lost(request: Request, worker: int, exc: BaseException) -> CommandError:
    if request.name == "getMore":
        cid = request.command.get("getMore")
        return CommandError(ErrorCode.CursorNotFound, f"cursor id {cid} not found")
    return CommandError(ErrorCode.HostUnreachable, f"worker process {worker} did not answer: {exc}")


async def _split_kill_cursors(relay: Relay, request: Request) -> dict[str, Any]:
    """killCursors naming cursors of several workers: each worker kills its own (this one
    through its own socket too), and the lists are merged in one reply."""
    seat = relay.seat
    command = request.command
    merged: dict[str, list] = {"cursorsKilled": [], "cursorsNotFound": [], "cursorsAlive": [],
                               "cursorsUnknown": []}
    groups = killcursors_owners(command, seat.count)
    if LOCAL in groups:
        groups.setdefault(seat.index, []).extend(groups.pop(LOCAL))
    for worker, ids in groups.items():
        part = {"killCursors": command["killCursors"], "cursors": ids, "$db": command.get("$db", "admin")}
        try:
            reply = _decode_reply(await relay.ask(worker, encode_op_msg(part, next(_ids), 0, 0)))
        except (OSError, asyncio.IncompleteReadError):
            merged["cursorsNotFound"].extend(ids)   # its worker is gone, and its cursors with it
            continue
        if reply.get("ok") != 1:
            return reply   # the same error every worker gives (a bad namespace, say)
        for key in merged:
            merged[key].extend(reply.get(key, []))
    return {**merged, "ok": 1.0}


async def _gather_current_op(relay: Relay, request: Request) -> dict[str, Any]:
    """currentOp: every worker's operations (this one's through its own socket), in one list."""
    message = raw_message(request)
    replies = await asyncio.gather(*(relay.ask(w, message) for w in range(relay.seat.count)), return_exceptions=True)
    inprog: list = []
    for reply in replies:
        if isinstance(reply, BaseException):
            continue   # a worker being restarted has no operations
        doc = _decode_reply(reply)
        if doc.get("ok") != 1:
            return doc
        inprog.extend(doc.get("inprog", []))
    return {"inprog": inprog, "ok": 1.0}
