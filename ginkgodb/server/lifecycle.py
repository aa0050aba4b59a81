"""The server: listeners, connections, the worker pool, and a graceful stop.

Stopping (SIGINT/SIGTERM, or `request_stop()`): stop accepting, let in-flight commands finish
(up to `shutdown_grace` seconds, then interrupt them), close every connection, stop the
workers; the caller then closes the engine, which flushes it.
"""
from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import logging
import os
import resource
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from ..commands import PARAMETERS, ReplicaSetMember, ReplicatedMember, track_commits, writes_data
from .auth_log import AuthLog
from .config import DEFAULT_MAX_CONNECTIONS, ServerConfig
from .logs import MongoJsonFormatter, RecentLines, event
from .protocol import ConnectionProtocol
from .routing import WorkerSeat, opid_numbers
from .state import ServerState
from .tls import TLSSniffer

#: how often CPython makes a running thread hand over the GIL. The default (5 ms) let one
#: CPU-bound command in a worker hold the event loop's ping replies to ~20 ms each (several
#: hand-overs per round trip); at 1 ms they take ~2 ms (measured, tests/unit/server)
GIL_SWITCH_INTERVAL = 0.001
#: mongod keeps a fifth of the open-file limit for files and listeners: connections get 80%
_FD_SHARE_FOR_CONNECTIONS = 0.8
#: how often writes held by an fsync lock look again (seconds)
_HELD_POLL = 0.05
#: how often a worker (serve --workers) looks whether its supervisor is still there (seconds)
_PARENT_POLL = 1.0


def supported_connections(requested: int) -> int:
    """mongod's rule: at most `requested`, and at most 80% of the soft open-file limit (a
    connection past that would fail in accept() instead of being refused cleanly)."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return requested
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(1, min(requested, int(soft * _FD_SHARE_FOR_CONNECTIONS)))


class Server:
    def __init__(self, config: ServerConfig, engine: Any, recent_log: Optional[RecentLines] = None,
                 seat: Optional[WorkerSeat] = None) -> None:
        self.config = config
        self.engine = engine
        #: with --workers N, this worker's place (routing.py); None for a server of one process
        self.seat = seat
        self.max_connections = supported_connections(config.max_connections)
        self.state = ServerState(config, recent_log, self.max_connections)
        if seat is not None:
            self.state.number_ops(opid_numbers(seat.index, seat.count))
        self._refusing = False  # within an episode of refused connections (logged once)
        self.state.on_shutdown_request = self._shutdown_requested
        self.state.security.report = AuthLog()
        self._grace = config.shutdown_grace
        #: writes that arrived while fsync-locked: held here, not in a worker thread, so that
        #: reads keep every worker (mongod's writers wait on its global lock the same way)
        self._held: list[tuple[ConnectionProtocol, Any]] = []
        self.pool = ThreadPoolExecutor(max_workers=config.command_threads, thread_name_prefix="ginkgodb-cmd")
        self.connections: set[ConnectionProtocol] = set()
        self._unsorted: set[Any] = set()   # TLS on: connections whose first byte is not here yet
        self.port: Optional[int] = None
        self._connection_ids = itertools.count(1)
        self._listeners: list[asyncio.AbstractServer] = []
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._stop: Optional[asyncio.Event] = None

    @property
    def quiet(self) -> bool:
        return self.config.quiet or bool(PARAMETERS.value("quiet"))

    @property
    def max_pipelined_bytes(self) -> int:
        return self.config.max_pipelined_bytes

    # -- writes held back by an fsync lock (event-loop thread) ------------------------------------
    def holds_back(self, conn: ConnectionProtocol, job: Any) -> bool:
        """Keep a write off the workers while the engine is fsync-locked; True when held."""
        if not (getattr(self.engine, "fsync_locked", False) and writes_data(job.request.command)):
            return False
        if not self._held and self._loop is not None:
            self._loop.call_later(_HELD_POLL, self._release_held)
        self._held.append((conn, job))
        return True

    def _release_held(self) -> None:
        """Hand held writes to the workers once unlocked, or once their operation was killed or
        timed out (dispatch then answers 11601/50 at once)."""
        now = time.monotonic()
        locked = getattr(self.engine, "fsync_locked", False)
        keep = []
        for conn, job in self._held:
            ctx = job.ctx
            if not locked or ctx.killed or conn.closed or (ctx.deadline is not None and now > ctx.deadline):
                conn.submit(job)
            else:
                keep.append((conn, job))
        self._held = keep
        if keep and self._loop is not None:
            self._loop.call_later(_HELD_POLL, self._release_held)

    def _shutdown_requested(self, timeout_secs: float) -> None:
        """The shutdown command: stop as on SIGTERM, with its own grace for in-flight work."""
        self._grace = timeout_secs
        event(logging.INFO, "COMMAND", 4695400, "conn", "Terminating via shutdown command",
              timeoutSecs=timeout_secs)
        self.request_stop()

    # -- connections (event-loop thread) -----------------------------------------------------
    def connection_opened(self, conn: ConnectionProtocol) -> Optional[int]:
        """The new connection's id, or None when it is over the limit and must be closed."""
        state = self.state
        if state.current_connections >= self.max_connections:
            state.rejected_connections += 1
            if not self._refusing:
                self._refusing = True
                event(logging.INFO, "NETWORK", 22942, "listener",
                      "Connection refused because there are too many open connections",
                      connectionCount=state.current_connections + 1, limit=self.max_connections)
            return None
        self.connections.add(conn)
        state.current_connections += 1
        state.total_connections += 1
        return next(self._connection_ids)

    def connection_closed(self, conn: ConnectionProtocol) -> None:
        if conn in self.connections:
            self.connections.discard(conn)
            self.state.current_connections -= 1
            if self._refusing and self.state.current_connections < self.max_connections * 0.9:
                self._refusing = False  # the episode is over: the next refusal is logged again

    # -- lifecycle ----------------------------------------------------------------------------
    async def start(self) -> int:
        """Bind every address; returns the port (the chosen one when the config said 0)."""
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        sys.setswitchinterval(GIL_SWITCH_INTERVAL)
        port = self.config.port
        tls = self.config.tls_context()

        def accept() -> asyncio.Protocol:
            if tls is None:
                return ConnectionProtocol(self)
            return TLSSniffer(lambda: ConnectionProtocol(self), tls, require=self.config.tls_mode == "requireTLS",
                              pending=self._unsorted)
        seat = self.seat
        for host in self.config.bind:
            listener = await self._loop.create_server(accept, host, port, reuse_address=True, backlog=512,
                                                      reuse_port=seat is not None or None)
            self._listeners.append(listener)
            if port == 0:
                port = listener.sockets[0].getsockname()[1]
            event(logging.INFO, "NETWORK", 23015, "listener", "Listening on", address=host)
        if seat is not None:
            await self._listen_for_siblings(seat)
        self.port = port
        self.state.set_port(port)
        requested = self.config.max_connections
        if self.max_connections < requested and requested != DEFAULT_MAX_CONNECTIONS:
            event(logging.WARNING, "NETWORK", 22941, "listener", "--maxConns too high, can only handle",
                  limit=self.max_connections)
        self._security_warnings()
        track_commits(self.engine)
        if self.config.repl_set:
            self._join_replica_set(port)
        if seat is None:
            event(logging.INFO, "NETWORK", 23016, "listener", "Waiting for connections", port=port,
                  ssl="off" if tls is None else "on")
        else:   # the supervisor says "Waiting for connections" once every worker is here
            event(logging.INFO, "NETWORK", 23016, "listener", "Worker waiting for connections", port=port,
                  worker=seat.index, pid=os.getpid())
            if seat.ready_fd >= 0:
                os.write(seat.ready_fd, b"1")
                os.close(seat.ready_fd)
            self._watch_parent(seat)
        return port

    async def _listen_for_siblings(self, seat: WorkerSeat) -> None:
        """The Unix socket on which sibling workers forward requests this worker owns."""
        assert self._loop is not None
        path = seat.socket_path(seat.index)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)   # left by this seat's previous worker, which died
        listener = await self._loop.create_unix_server(lambda: ConnectionProtocol(self, internal=True), path,
                                                       backlog=512)
        self._listeners.append(listener)

    def _watch_parent(self, seat: WorkerSeat) -> None:
        """Stop when the supervisor is gone (killed): nobody would restart or stop this worker."""
        if self._loop is None or self._stop is None or self._stop.is_set():
            return
        if seat.parent_pid and os.getppid() != seat.parent_pid:
            event(logging.WARNING, "CONTROL", 8990001, "worker", "The supervising process is gone: stopping",
                  worker=seat.index)
            self.request_stop()
            return
        self._loop.call_later(_PARENT_POLL, self._watch_parent, seat)

    def _security_warnings(self) -> None:
        """mongod's startup warning without access control (22120), and ginkgodb's own when
        the server is also reachable from other hosts; both are kept for getLog
        startupWarnings (mongosh shows them on connect)."""
        if self.config.auth:
            return
        self._startup_warning(22120, "Access control is not enabled for the database. Read and write access to "
                                     "data and configuration is unrestricted")
        exposed = [a for a in self.config.bind if not _is_loopback(a)]
        if exposed:
            self._startup_warning(22121, "The server is listening on non-loopback addresses without access "
                                         "control: any host that can reach it may read and change every database. "
                                         "Start it with --auth, or bind to 127.0.0.1", addresses=exposed)

    def _startup_warning(self, log_id: int, msg: str, **attr: Any) -> None:
        event(logging.WARNING, "CONTROL", log_id, "initandlisten", msg, tags=["startupWarnings"], **attr)
        record = logging.LogRecord("ginkgodb", logging.WARNING, __file__, 0, msg, None, None)
        record.mongo = ("CONTROL", log_id, "initandlisten", {"tags": ["startupWarnings"], **attr})
        self.state.startup_warnings.append(MongoJsonFormatter().format(record))

    def _join_replica_set(self, port: int) -> None:
        """--replSet: the member, with its stored configuration if it has one (then it is
        primary at once: a set of one elects itself)."""
        host = member_host(self.config.bind, port)
        member: ReplicaSetMember
        if self.config.etcd:   # several members: replication, elections in etcd
            member = ReplicatedMember(self.engine, self.config.repl_set or "", host, self.state.topology,
                                      local_names=self.config.bind, etcd_url=self.config.etcd)
        else:
            member = ReplicaSetMember(self.engine, self.config.repl_set or "", host, self.state.topology,
                                      local_names=self.config.bind)
        member.load()
        self.state.replica_set = member
        for warning in member.warnings:
            event(logging.WARNING, "REPL", 21405, "initandlisten", warning)
        event(logging.INFO, "REPL", 21392 if member.initialized else 21313, "initandlisten",
              "New replica set config in use" if member.initialized else
              "Did not find local replica set configuration document at startup",
              replSet=member.set_name, me=member.me, state=member.state.label)

    def request_stop(self) -> None:
        """Ask the server to stop; safe from any thread and from signal handlers."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)

    async def serve_until_stopped(self) -> None:
        assert self._stop is not None, "start() first"
        await self._stop.wait()
        await self.shutdown()

    async def shutdown(self) -> None:
        event(logging.INFO, "CONTROL", 4784900, "SignalHandler", "Stepping down and shutting down")
        self.state.shutting_down = True
        if self.state.replica_set is not None:
            self.state.replica_set.close()
        for listener in self._listeners:
            listener.close()
        await self._drain(self._grace)
        if self.state.ops_in_flight:
            self.state.kill_all()  # InterruptedAtShutdown-style: the engine stops at its next check
            await self._drain(5.0)
        for conn in list(self.connections):
            conn.close()
        for sniffer in list(self._unsorted):
            sniffer.abort()
        await asyncio.sleep(0)  # let transports run their close callbacks
        await asyncio.get_running_loop().run_in_executor(None, self.pool.shutdown, True)
        event(logging.INFO, "CONTROL", 20565, "SignalHandler", "Now exiting")

    async def _drain(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        while self.state.ops_in_flight and time.monotonic() < until:
            await asyncio.sleep(0.01)


def _is_loopback(address: str) -> bool:
    if address == "localhost" or address.startswith("/"):
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def member_host(bind: tuple[str, ...], port: int) -> str:
    """The address a member gives itself (mongod's someHostAndPortForMe): the first bound
    address that is neither loopback nor a wildcard; with loopback only, the first of them;
    with a wildcard, the host name."""
    loopback = {"127.0.0.1", "::1", "localhost"}
    wildcard = {"0.0.0.0", "::", ""}
    for addr in bind:
        if addr not in loopback and addr not in wildcard:
            return f"{addr}:{port}"
    if all(addr in loopback for addr in bind):
        return f"{bind[0] if bind else 'localhost'}:{port}"
    return f"{socket.gethostname()}:{port}"
