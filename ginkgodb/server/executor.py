"""Running one request: context, deadline, op table, dispatch, encoding, slow-op log.

Cheap commands run inline on the event loop (a thread hop costs more than they do): those that
never touch the engine, and the short reads and writes their declarations allow (a point find, a
one-document write, a small transaction's statements and commit: commands/inline_writes.py);
everything else runs in a worker thread so a slow query on one connection does not hold up the
others. `Job.run` never raises: it returns the bytes to send (or None).
"""
from __future__ import annotations

import logging
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from ..commands import PROFILE, CommandContext, OpInfo, dispatch, namespace_of
from ..errors import CommandError, ErrorCode
from ..limits import MAX_INTERNAL_BSON_SIZE, MAX_MESSAGE_SIZE
from ..wire import Request, WireConnection
from .exhaust import streams
from .logs import event, summarize

_HANDSHAKE = frozenset({"hello", "isMaster", "ismaster"})
_LOG = logging.getLogger("ginkgodb")


@dataclass
class Job:
    """One request on its way through the server."""

    request: Request
    ctx: CommandContext
    wire: WireConnection
    inline: bool
    op: Optional[OpInfo] = None
    started: float = field(default_factory=time.monotonic)
    reply_ok: bool = True
    error_code: Optional[int] = None
    exhaust: bool = False        # the reply streams on: the same getMore runs again (exhaust.py)

    def run(self) -> Optional[bytes]:
        reply = dispatch(self.ctx, self.request.command)
        self.reply_ok = reply.get("ok") == 1.0
        self.error_code = reply.get("code") if not self.reply_ok else None
        exhaust = streams(self.request, reply)
        out, self.exhaust = encode(self.wire, self.request, reply, more_to_come=exhaust)
        return out


def encode(wire: WireConnection, request: Request, reply: Mapping[str, Any], *,
           more_to_come: bool = False) -> tuple[Optional[bytes], bool]:
    """(reply bytes, whether they carry moreToCome); a reply that cannot be encoded or is too
    large becomes an error reply, which ends an exhaust stream."""
    try:
        out = wire.encode_reply(request, reply, more_to_come=more_to_come)
    except Exception as exc:  # an unencodable value in a reply is a bug: report it, keep serving
        logging.getLogger("ginkgodb.server").exception("cannot encode reply to %s", request.name)
        return wire.encode_reply(request, CommandError(
            ErrorCode.InternalError, f"internal error: cannot encode reply: {exc}").to_reply()), False
    if out is not None and (len(out) > MAX_MESSAGE_SIZE or len(out) - 21 > MAX_INTERNAL_BSON_SIZE):
        size = len(out) - 21
        return wire.encode_reply(request, CommandError(
            ErrorCode.BSONObjectTooLarge,
            f"BSONObj size: {size} (0x{size:X}) is invalid. Size must be between 0 and "
            f"{MAX_INTERNAL_BSON_SIZE}({MAX_INTERNAL_BSON_SIZE // (1024 * 1024)}MB)").to_reply()), False
    return out, more_to_come


def slow_op_log(job: Job) -> None:
    """mongod's "Slow query" line (id 51803) for operations over slowms (--slowms, `profile`),
    sampled at the profile's sampleRate; every operation when the log level is above 0."""
    millis = int((time.monotonic() - job.started) * 1000)
    slow_ms = PROFILE.slowms
    if millis < slow_ms:
        if not _LOG.isEnabledFor(logging.DEBUG):
            return
    elif PROFILE.sample_rate < 1.0 and random.random() >= PROFILE.sample_rate:
        return
    attr: dict[str, Any] = {"type": "command", "ns": namespace_of(job.request.command),
                            "command": summarize(job.request.command), "durationMillis": millis}
    if job.error_code is not None:
        attr["ok"] = 0
        attr["errCode"] = job.error_code
    level = logging.INFO if millis >= slow_ms else logging.DEBUG
    event(level, "COMMAND", 51803, f"conn{job.ctx.connection_id}", "Slow query", **attr)
