"""The awaitable hello on the event loop, and its streaming form (exhaustAllowed/moreToCome).

A hello with `topologyVersion` and `maxAwaitTimeMS` is answered when the topology version moves
or the time passes, whichever comes first; it never holds a worker thread (drivers keep one such
request open per monitored server, all the time). When the request allows exhaust (OP_MSG
`exhaustAllowed`), every answer carries `moreToCome` and the next one follows by itself, as
mongod streams it to the drivers' monitors, until the connection closes or an answer is an
error. The connection processes no other request meanwhile (the client sends none: the
connection belongs to its monitor).
"""
from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from typing import Any, Optional, Protocol

from ..commands import CLOSE_CONNECTION, awaitable_wait, dispatch
from ..wire import Request
from ..wire.framing import OP_MSG
from ..wire.op_msg import MORE_TO_COME, encode_op_msg

Job = Any  # executor.Job (not imported: the connection imports this module)


class HelloConnection(Protocol):
    """What a stream needs of its connection (protocol.ConnectionProtocol)."""

    state: Any
    server: Any
    extra: dict
    closed: bool

    def new_job(self, request: Request) -> Job: ...
    def send_bytes(self, out: Optional[bytes]) -> None: ...
    def hello_finished(self) -> None: ...
    def close(self) -> None: ...

#: ids of streamed replies: a range of their own, far from the connection's reply counter
_STREAM_IDS = itertools.count(1 << 30)


def is_awaitable_hello(request: Request) -> bool:
    cmd = request.command
    return "topologyVersion" in cmd and "maxAwaitTimeMS" in cmd


class HelloStream:
    """One connection's awaitable hello, from its first wait to its last answer."""

    def __init__(self, conn: HelloConnection, request: Request) -> None:
        self.conn = conn
        self.request = request
        self.command = dict(request.command)
        self.streaming = request.exhaust_allowed and request.op_code == OP_MSG
        self.response_to = request.request_id
        self._timer: Optional[asyncio.TimerHandle] = None
        self._unsubscribe: Optional[Callable[[], None]] = None
        self._done = False

    # -- waiting ------------------------------------------------------------------------------
    def start(self) -> None:
        """Wait (on the loop) until the topology changes or maxAwaitTimeMS passes, then answer."""
        if self._done:
            return
        watch = self.conn.state.topology
        seconds = awaitable_wait(self.command, watch)
        if seconds is None:  # due now (a stale or foreign version, or a bad request)
            self._answer()
            return
        loop = asyncio.get_running_loop()
        self._unsubscribe = watch.subscribe(lambda: loop.call_soon_threadsafe(self._wake))
        self._timer = loop.call_later(seconds, self._wake)

    def _wake(self) -> None:
        if self._done or (self._timer is None and self._unsubscribe is None):
            return
        self._stop_waiting()
        self._answer()

    def _stop_waiting(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def cancel(self) -> None:
        """The connection closed: stop for good."""
        self._done = True
        self._stop_waiting()

    # -- answering ----------------------------------------------------------------------------
    def _answer(self) -> None:
        request = Request(self.request.request_id, self.request.op_code, self.command,
                          False, self.request.exhaust_allowed, None, self.request.wire_size)
        job = self.conn.new_job(request)
        if job.inline:
            self._answered(job, _dispatch(job))
            return
        loop = asyncio.get_running_loop()

        def in_worker() -> None:
            try:
                reply: Optional[dict] = _dispatch(job)
            except BaseException:  # dispatch does not raise; a failure here is a bug
                logging.getLogger("ginkgodb.server").exception("awaitable hello failed")
                reply = None
            loop.call_soon_threadsafe(self._answered, job, reply)
        self.conn.server.pool.submit(in_worker)

    def _answered(self, job: Job, reply: Optional[dict]) -> None:
        if self._done:
            return
        if reply is None or self.conn.extra.pop(CLOSE_CONNECTION, False):
            self._done = True
            self.conn.close()
            return
        ok = reply.get("ok") == 1.0
        keep_streaming = self.streaming and ok and not self.conn.closed
        if keep_streaming:
            request_id = next(_STREAM_IDS) & 0x7FFFFFFF
            self.conn.send_bytes(encode_op_msg(reply, request_id, self.response_to, MORE_TO_COME))
            self.response_to = request_id
            self.command["topologyVersion"] = reply.get("topologyVersion", self.command.get("topologyVersion"))
            self.start()
            return
        self._done = True
        if self.response_to != self.request.request_id:  # the end of a stream: answer its last reply
            out = encode_op_msg(reply, next(_STREAM_IDS) & 0x7FFFFFFF, self.response_to)
        else:
            out = job.wire.encode_reply(job.request, reply)
        self.conn.send_bytes(out)
        self.conn.hello_finished()


def _dispatch(job: Job) -> dict:
    reply = dispatch(job.ctx, job.request.command)
    job.reply_ok = reply.get("ok") == 1.0
    return reply
