"""`ginkgodb serve`: open the data directory, serve, stop cleanly on SIGINT/SIGTERM.

Exit codes follow mongod: 0 after a clean stop, 2 for a bad --setParameter or TLS option, 48 when the
address is in use, 100 when the data directory cannot be opened (another process holds its lock, or it is unusable).
"""
from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
from typing import Optional

from ..commands import PARAMETERS, PROFILE
from ..errors import CommandError, StorageError
from ..version import MONGODB_VERSION, __version__
from .config import ServerConfig
from .event_loop import loop_factory
from .lifecycle import Server
from .logs import configure, event
from .routing import WorkerSeat
from .tls import TLSSetupError

EXIT_CLEAN = 0
EXIT_BAD_OPTIONS = 2
EXIT_NET_ERROR = 48
EXIT_DATA_DIR = 100


#: the collector's thresholds in the server process: a request that builds many objects (a
#: 100,000-value $in, say) otherwise triggers full collections that hold the interpreter lock for
#: 100+ ms, stalling every other connection (bench/slow_query_latency.py: other clients' worst
#: pause beside such a request 139 ms with Python's defaults, 22 ms with these)
GC_THRESHOLDS = (50_000, 20, 100)


def run(config: ServerConfig, seat: Optional[WorkerSeat] = None) -> int:
    """Serve until stopped. With --workers above 1 this process supervises that many server
    processes (supervisor.py), each of which comes back here with its `seat`."""
    if config.workers != 1 and seat is None:
        from .supervisor import supervise
        return supervise(config)
    gc.set_threshold(*GC_THRESHOLDS)
    append = config.log_append or seat is not None   # workers share the supervisor's log file
    try:
        stream = open(config.log_path, "a" if append else "w", encoding="utf-8") if config.log_path else None
    except OSError as exc:
        print(f"ginkgodb: cannot open the log file {config.log_path}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_OPTIONS
    recent = configure(config.log_level, stream)
    PARAMETERS.set("quiet", config.quiet)
    PROFILE.slowms = config.slow_ms
    if config.log_level == "debug":
        PARAMETERS.set("logLevel", 1)
    why = apply_startup_parameters(config)
    if why is not None:
        event(logging.ERROR, "CONTROL", 20574, "initandlisten", "Error during global initialization", error=why)
        print(f"ginkgodb: {why}", file=sys.stderr)
        return EXIT_BAD_OPTIONS
    if seat is None:
        event(logging.INFO, "CONTROL", 4615611, "initandlisten", "ginkgodb starting",
              pid=os.getpid(), port=config.port, dbPath=config.dbpath or ":memory:",
              version=__version__, mongodbVersion=MONGODB_VERSION)
    try:
        config.tls_context()
    except TLSSetupError as exc:
        event(logging.ERROR, "CONTROL", 20574, "initandlisten", "Error during global initialization", error=str(exc))
        print(f"ginkgodb: {exc}", file=sys.stderr)
        return EXIT_BAD_OPTIONS
    engine = _open_engine(config, seat)
    if engine is None:
        return EXIT_DATA_DIR
    if seat is not None:
        engine.cursors.name_worker(seat.index)   # a getMore elsewhere finds its way here
    gc.freeze()  # what start-up made lives as long as the server: no collection scans it again
    try:
        with asyncio.Runner(loop_factory=loop_factory(config.event_loop)) as runner:
            return runner.run(_serve(Server(config, engine, recent, seat)))
    finally:
        engine.close()
        event(logging.INFO, "STORAGE", 4784917, "initandlisten", "Data directory closed",
              dbPath=config.dbpath or ":memory:")


def apply_startup_parameters(config: ServerConfig) -> Optional[str]:
    """--setParameter name=value, typed as its parameter takes it; the reason when one is bad."""
    for name, text in config.set_parameters:
        try:
            PARAMETERS.set_at_startup(name, text)
        except CommandError as exc:
            return exc.errmsg
    return None


def _open_engine(config: ServerConfig, seat: Optional[WorkerSeat] = None):
    from ..engine import Engine, default_oplog_size
    size = (config.oplog_size_mb * 1024 * 1024 if config.oplog_size_mb
            else default_oplog_size(config.dbpath, server=True))
    # a worker shares the directory with its siblings only, under the supervisor's lock
    sharing = {"shared": True, "held_locks": seat.lock_fds} if seat is not None else {}
    try:
        return Engine.open(config.dbpath, oplog_bytes=size, **config.storage_options(), **sharing)
    except StorageError as exc:
        if exc.kind == "locked":
            why = (f"DBPathInUse: Unable to lock the data directory {config.dbpath}: another ginkgodb "
                   "(or other process) is already using it")
        else:
            why = f"Cannot open the data directory {config.dbpath}: {exc.message}"
    except OSError as exc:
        why = f"Cannot open the data directory {config.dbpath}: {exc}"
    event(logging.ERROR, "STORAGE", 20557, "initandlisten", "Cannot start", error=why)
    print(f"ginkgodb: {why}", file=sys.stderr)
    return None


async def _serve(server: Server) -> int:
    try:
        await server.start()
    except OSError as exc:
        why = f"Failed to listen on {','.join(server.config.bind)}:{server.config.port}: {exc.strerror or exc}"
        event(logging.ERROR, "NETWORK", 23024, "listener", "Error setting up listener", error=why)
        print(f"ginkgodb: {why}", file=sys.stderr)
        server.pool.shutdown(wait=False)
        return EXIT_NET_ERROR
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, _on_signal, server, sig)
    await server.serve_until_stopped()
    return EXIT_CLEAN


def _on_signal(server: Server, sig: signal.Signals) -> None:
    event(logging.INFO, "CONTROL", 23377, "SignalHandler", "Received signal",
          signal=int(sig), error=signal.strsignal(sig) or sig.name)
    server.request_stop()
