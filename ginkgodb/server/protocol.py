"""One client connection: an asyncio.Protocol with manual framing around the wire codec.

Requests on a connection run one at a time and in order (MongoDB's contract); while one runs
in a worker thread, later bytes are buffered. What one connection may make the server hold is
bounded: reading pauses once the buffer holds more than `max_pipelined_bytes` of received,
unanswered requests, or more than the first message's own declared length when that is larger
(the codec refuses lengths above maxMessageSizeBytes, so a partial frame can never grow past
48,000,000 bytes). Writes that the peer does not drain also pause request processing.
"""
from __future__ import annotations

import asyncio
import logging
import socket
import uuid
from concurrent.futures import Executor
from typing import Any, Optional, Protocol

from ..commands import CLOSE_CONNECTION, AuthSession, CommandContext, deadline_from, hold_for_inline, runs_inline
from ..engine import WouldBlock
from ..errors import CommandError, code_name
from ..limits import MAX_MESSAGE_SIZE
from ..wire import ProtocolError, Request, WireConnection
from .executor import _HANDSHAKE, Job, slow_op_log
from .forwarding import Relay, forward
from .hello_stream import HelloStream, is_awaitable_hello
from .logs import event
from .routing import LOCAL, WorkerSeat, route
from .state import ServerState
from .tls import peer_subject

#: _run_on_loop's answer for a job that must run in a worker after all
_IN_WORKER = object()


class ConnectionOwner(Protocol):
    """What a connection needs of the server that accepted it (lifecycle.Server)."""

    engine: Any
    state: ServerState
    pool: Executor
    seat: Optional[WorkerSeat]   # with --workers N: this process's place among them (routing.py)

    @property
    def quiet(self) -> bool: ...

    @property
    def max_pipelined_bytes(self) -> int: ...

    def connection_opened(self, conn: ConnectionProtocol) -> Optional[int]: ...
    def holds_back(self, conn: ConnectionProtocol, job: Job) -> bool: ...
    def connection_closed(self, conn: ConnectionProtocol) -> None: ...


class ConnectionProtocol(asyncio.Protocol):
    def __init__(self, server: ConnectionOwner, internal: bool = False) -> None:
        self.server = server
        #: a sibling worker's channel (forwarded requests run here, never routed on)
        self.internal = internal
        self.relay: Optional[Relay] = None
        self.forwarding: Optional[asyncio.Task] = None   # a routed request on its way
        self.state = server.state
        self.wire = WireConnection()
        self.transport: Optional[asyncio.Transport] = None
        self.connection_id = 0
        self.remote = ""
        self.uuid = str(uuid.uuid4())
        self.client_metadata: Optional[dict] = None
        self.extra: dict[str, Any] = {}
        self.auth: Optional[AuthSession] = None   # who this connection is (commands/auth_state.py)
        self.job: Optional[Job] = None
        self.hello_stream: Optional[HelloStream] = None   # an awaitable hello being waited on
        self.closed = False
        self._write_paused = False
        self._read_paused = False
        self._exhaust_next: Optional[Request] = None   # the getMore an exhaust stream runs next

    # -- asyncio callbacks --------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        peer = transport.get_extra_info("peername")
        self.remote = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        connection_id = self.server.connection_opened(self)
        if connection_id is None:  # over --maxConns: closed at once, as mongod does
            self.closed = True
            transport.close()
            return
        self.connection_id = connection_id
        self.auth = AuthSession(self.state.security, self.remote, certificate_subject=peer_subject(transport))
        if not self.server.quiet:
            event(logging.INFO, "NETWORK", 22943, "listener", "Connection accepted",
                  remote=self.remote, uuid={"uuid": {"$uuid": self.uuid}},
                  connectionId=self.connection_id, connectionCount=self.state.current_connections)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if not self.connection_id:  # refused over the connection limit: it never counted
            return
        self.closed = True
        if self.job is not None:  # the client left: stop its operation at the next check
            self.job.ctx.killed = True
        if self.hello_stream is not None:
            self.hello_stream.cancel()
        if self.forwarding is not None:
            self.forwarding.cancel()
        if self.relay is not None:
            self.relay.close()
        self.server.connection_closed(self)
        if not self.server.quiet:
            event(logging.INFO, "NETWORK", 22944, f"conn{self.connection_id}", "Connection ended",
                  remote=self.remote, uuid={"uuid": {"$uuid": self.uuid}},
                  connectionId=self.connection_id, connectionCount=self.state.current_connections)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        self.state.bytes_in += len(data)
        self.wire.receive_data(data)
        self._pump()

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        self._pump()

    # -- request processing -------------------------------------------------------------------
    def _pump(self) -> None:
        """Take requests off the buffer until one must wait for a worker thread."""
        while (self.job is None and self.hello_stream is None and self.forwarding is None and not self.closed
               and not self._write_paused):
            if self.state.shutting_down:
                self.close()
                return
            if self._continue_exhaust():
                continue
            try:
                request = self.wire.next_request()
            except ProtocolError as err:
                if not self._protocol_error(err):
                    return
                continue
            if request is None:
                break
            self._start(request)
        self._flow_control()

    def _protocol_error(self, err: ProtocolError) -> bool:
        """Answer or close on a bad message; False when the connection was closed."""
        if err.fatal:
            event(logging.WARNING, "NETWORK", 22988, f"conn{self.connection_id}",
                  "Error receiving request from client. Ending connection from remote",
                  error=f"{code_name(err.code)}: {err.errmsg}",
                  remote=self.remote, connectionId=self.connection_id)
            self.close()
            return False
        self._send(self.wire.encode_error(err))
        return True

    def _start(self, request: Request) -> None:
        self.state.requests += 1
        name = request.name
        self.state.count(name, request.command)
        seat = self.server.seat
        if seat is not None and not self.internal and request.frame is not None:
            target = route(request.command, seat.index, seat.count)
            if target != LOCAL:
                self._forward(request, target, seat)
                return
        self._start_here(request)

    def _forward(self, request: Request, target: int, seat: WorkerSeat) -> None:
        """Hand the request to its owner (forwarding.py); the next request waits for it."""
        if self.relay is None:
            self.relay = Relay(seat)
        task = asyncio.get_running_loop().create_task(
            forward(self.relay, request, target, self._send, lambda reply: self.wire.encode_reply(request, reply)))
        self.forwarding = task

        def done(_: asyncio.Task) -> None:
            self.forwarding = None
            if task.cancelled() or self.closed:
                return
            exc = task.exception()
            if exc is not None:
                logging.getLogger("ginkgodb.server").error("forwarding %s failed", request.name, exc_info=exc)
                self.close()
                return
            if task.result():
                self._start_here(request)   # broadcast: the siblings have it, now this worker
            self._pump()
        task.add_done_callback(done)

    def _start_here(self, request: Request) -> None:
        name = request.name
        if name in _HANDSHAKE and is_awaitable_hello(request):
            self.hello_stream = HelloStream(self, request)
            self.hello_stream.start()
            return
        job = self.new_job(request)
        job.op = self.state.begin_op(self.connection_id, self.remote, request.command, job.ctx,
                                     self.client_metadata)
        if job.inline:
            out = self._run_on_loop(job)
            if out is not _IN_WORKER:
                self._finish(job, out)
                return
            job.inline = False
        self.job = job
        if not self.server.holds_back(self, job):
            self.submit(job)

    def _run_on_loop(self, job: Job) -> Any:
        """Run a job its declaration lets run on the loop, holding what it would wait for
        (commands/inline_writes.py); _IN_WORKER when that is held elsewhere, or when the
        command met a wait (WouldBlock: nothing of it was committed): a worker runs it then."""
        held = hold_for_inline(job.ctx, job.request.command)
        if held is None:
            self.state.inline_deferred += 1
            return _IN_WORKER
        try:
            with held:
                return job.run()
        except WouldBlock:
            self.state.inline_deferred += 1
            return _IN_WORKER

    def new_job(self, request: Request) -> Job:
        ctx = CommandContext(engine=self.server.engine, connection_id=self.connection_id,
                             client_address=self.remote, server=self.state,
                             client_metadata=self.client_metadata, extra=self.extra, auth=self.auth,
                             javascript_enabled=self.server.config.javascript_enabled)
        job = Job(request, ctx, self.wire, inline=runs_inline(request.command, self.server.engine))
        try:
            ctx.deadline = deadline_from(request.command, job.started)
        except CommandError:
            ctx.deadline = None  # dispatch reports the bad maxTimeMS
        return job

    def hello_finished(self) -> None:
        """The awaitable hello was answered (not streamed on): take the next request."""
        self.hello_stream = None
        self._pump()

    def send_bytes(self, out: Optional[bytes]) -> None:
        self._send(out)

    def submit(self, job: Job) -> None:
        """Run this connection's current request in a worker thread."""
        self.server.pool.submit(self._run_in_worker, job, asyncio.get_running_loop())

    def _run_in_worker(self, job: Job, loop: asyncio.AbstractEventLoop) -> None:
        """Worker thread: run the job, then hand the bytes back to the loop in one wake-up
        (cheaper than run_in_executor's future chain)."""
        try:
            out: Optional[bytes] = job.run()
            failed = False
        except BaseException:  # Job.run does not raise; a failure here is a bug
            logging.getLogger("ginkgodb.server").exception("command worker failed")
            out, failed = None, True
        try:
            loop.call_soon_threadsafe(self._job_done, job, out, failed)
        except RuntimeError:  # the loop is already closed: nobody is left to answer
            pass

    def _job_done(self, job: Job, out: Optional[bytes], failed: bool) -> None:
        self.job = None
        if failed:
            if job.op is not None:
                self.state.end_op(job.op)
            self.close()
            return
        self._finish(job, out)
        self._pump()

    def _finish(self, job: Job, out: Optional[bytes]) -> None:
        if job.op is not None:
            self.state.end_op(job.op)
        if self.extra.pop(CLOSE_CONNECTION, False):  # a fail point drops the connection
            self.closed = True
            self.close()
            return
        if job.request.name in _HANDSHAKE and job.reply_ok and self.client_metadata is None:
            self._remember_client(job.request.command.get("client"))
        if job.request.name == "shutdown" and job.reply_ok:
            self.close()  # as mongod: the server goes away before it answers
            return
        self._send(out)
        slow_op_log(job)
        if job.exhaust:
            self._exhaust_next = self.wire.exhaust_request(job.request)

    def _continue_exhaust(self) -> bool:
        """Run the next getMore of an exhaust stream before reading any other request (the
        client only reads until a reply comes without moreToCome)."""
        request, self._exhaust_next = self._exhaust_next, None
        if request is None:
            return False
        self._start(request)
        return True

    def _remember_client(self, client: Any) -> None:
        if isinstance(client, dict):
            self.client_metadata = client
            if not self.server.quiet:
                event(logging.INFO, "NETWORK", 51800, f"conn{self.connection_id}", "client metadata",
                      remote=self.remote, client=f"conn{self.connection_id}", doc=client)

    def _send(self, out: Optional[bytes]) -> None:
        if out and not self.closed and self.transport is not None:
            self.state.bytes_out += len(out)
            self.transport.write(out)

    def _read_limit(self) -> int:
        """Buffered bytes past which reading pauses: the pipelining allowance, or the first
        message's declared length when it is larger (that message must be able to complete)."""
        return max(self.server.max_pipelined_bytes, min(self.wire.head_length, MAX_MESSAGE_SIZE))

    def _flow_control(self) -> None:
        if self.transport is None or self.closed:
            return
        buffered, limit = self.wire.buffered, self._read_limit()
        if not self._read_paused:
            if buffered > limit:  # the first message is whole: the buffer drains without reading
                self.transport.pause_reading()
                self._read_paused = True
        elif buffered <= limit // 2 or buffered < self.wire.head_length:
            self.transport.resume_reading()  # drained, or the next message needs more bytes
            self._read_paused = False

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
