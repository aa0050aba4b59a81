"""`ginkgodb serve --workers N`: one supervising process and N server processes on one port.

The supervisor takes the data directory's exclusive lock (so no other server or embedded
client can open it), reserves the port, and starts the workers as fresh interpreters
(worker.py) that inherit the lock's descriptors and open the engine in the shared mode of
docs/design/multiprocess.md; each listens on the same port with SO_REUSEPORT, so the kernel
spreads connections over them. It never opens LMDB itself.

It supervises: SIGTERM/SIGINT stop every worker cleanly (each drains its in-flight commands as
a single server does); a worker that dies (a signal, a crash) is started again in its seat,
with the same index, so cursor ids keep naming the right process (the dead one's cursors and
open transactions are gone: CursorNotFound, NoSuchTransaction); a worker that exits cleanly
on its own (the `shutdown` command) stops the whole server. See docs/design/workers.md.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from ..errors import StorageError
from ..version import MONGODB_VERSION, __version__
from .config import ServerConfig
from .logs import configure, event
from .routing import WorkerSeat
from .worker_spec import encode_spec

EXIT_CLEAN = 0
EXIT_BAD_OPTIONS = 2
EXIT_NET_ERROR = 48
EXIT_DATA_DIR = 100
#: a seat whose worker dies this many times within RESTART_WINDOW seconds is given up (and the server stops)
MAX_RESTARTS = 5
RESTART_WINDOW = 60.0
#: how long a starting worker may take to listen (seconds)
START_TIMEOUT = 120.0
_POLL = 0.2
#: ginkgodb's own log ids for the supervisor's events
LOG_WORKER_STARTED = 8990010
LOG_WORKER_DIED = 8990011
LOG_WORKER_GIVEN_UP = 8990012


def refusal(config: ServerConfig) -> Optional[str]:
    """Why `--workers` cannot be used with these settings (None: it can)."""
    from ..engine import MAX_WORKERS
    if not 1 <= config.workers <= MAX_WORKERS:
        return f"--workers must be between 1 and {MAX_WORKERS}, not {config.workers}"
    if not sys.platform.startswith("linux") or not hasattr(socket, "SO_REUSEPORT"):
        return "--workers above 1 needs SO_REUSEPORT load balancing (Linux)"
    if config.in_memory:
        return "--workers above 1 needs a data directory: in-memory data cannot be shared between processes"
    if config.auth:
        return ("--workers above 1 is not supported with --auth: a request forwarded to the worker that holds "
                "its cursor or transaction would lose the connection's authenticated users")
    if config.repl_set:
        return "--workers above 1 is not supported with --replSet: the replica-set state is per process"
    return None


class Seat:
    """One worker's place: its index, its process, and its recent deaths."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.proc: Optional[subprocess.Popen] = None
        self.ready_fd = -1          # our end of the pipe the worker writes once it listens
        self.ready = False
        self.ever_ready = False
        self.deaths: list[float] = []


class Supervisor:
    def __init__(self, config: ServerConfig, lock_fds: tuple[int, int], socket_dir: str) -> None:
        self.config = config
        self.lock_fds = lock_fds
        self.socket_dir = socket_dir
        self.seats = [Seat(i) for i in range(config.workers)]
        self.stopping = False
        self.exit_code = EXIT_CLEAN

    def request_stop(self, signum: int, _frame: object) -> None:
        if not self.stopping:
            event(logging.INFO, "CONTROL", 23377, "SignalHandler", "Received signal",
                  signal=signum, error=signal.strsignal(signum) or str(signum))
        self.stopping = True

    def start(self, seat: Seat) -> None:
        read_end, write_end = os.pipe()
        spec = encode_spec(self.config, WorkerSeat(index=seat.index, count=len(self.seats),
                                                   socket_dir=self.socket_dir, lock_fds=self.lock_fds,
                                                   ready_fd=write_end, parent_pid=os.getpid()))
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])   # the worker imports this ginkgodb
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        try:
            seat.proc = subprocess.Popen([sys.executable, "-m", "ginkgodb.server.worker", spec], env=env,
                                         pass_fds=(*self.lock_fds, write_end))
        finally:
            os.close(write_end)
        seat.ready_fd, seat.ready = read_end, False
        event(logging.INFO, "CONTROL", LOG_WORKER_STARTED, "supervisor", "Worker started",
              worker=seat.index, pid=seat.proc.pid)

    def _read_ready(self, timeout: float) -> None:
        waiting = {s.ready_fd: s for s in self.seats if s.ready_fd >= 0}
        if not waiting:
            time.sleep(timeout)
            return
        try:
            readable, _, _ = select.select(list(waiting), [], [], timeout)
        except InterruptedError:
            return
        for fd in readable:
            seat = waiting[fd]
            got = os.read(fd, 1)
            os.close(fd)
            seat.ready_fd = -1
            seat.ready = got == b"1"
            seat.ever_ready = seat.ever_ready or seat.ready

    def _died(self, seat: Seat) -> bool:
        """Handle a worker that exited; False when the server must stop."""
        assert seat.proc is not None
        code = seat.proc.returncode
        if seat.ready_fd >= 0:
            os.close(seat.ready_fd)
            seat.ready_fd = -1
        if not seat.ever_ready:   # it never listened: a bad option, the port, the directory
            self.exit_code = code if code and code > 0 else EXIT_DATA_DIR
            return False
        if code == 0:             # the shutdown command: the whole server goes
            event(logging.INFO, "CONTROL", LOG_WORKER_DIED, "supervisor", "Worker stopped: stopping the server",
                  worker=seat.index, pid=seat.proc.pid)
            return False
        now = time.monotonic()
        seat.deaths = [t for t in seat.deaths if now - t < RESTART_WINDOW] + [now]
        how = {"signal": signal.Signals(-code).name} if code < 0 else {"exitCode": code}
        if len(seat.deaths) > MAX_RESTARTS:
            event(logging.ERROR, "CONTROL", LOG_WORKER_GIVEN_UP, "supervisor",
                  "Worker keeps dying: stopping the server", worker=seat.index, restarts=MAX_RESTARTS, **how)
            self.exit_code = code if code > 0 else 1
            return False
        event(logging.WARNING, "CONTROL", LOG_WORKER_DIED, "supervisor", "Worker died: restarting it",
              worker=seat.index, pid=seat.proc.pid, **how)
        self.start(seat)
        return True

    def run(self) -> int:
        for seat in self.seats:
            self.start(seat)
        started = time.monotonic()
        announced = False
        while not self.stopping:
            self._read_ready(_POLL)
            for seat in self.seats:
                if seat.proc is not None and seat.proc.poll() is not None and not self.stopping:
                    if not self._died(seat):
                        self.stopping = True
            if not announced and all(s.ever_ready for s in self.seats):
                announced = True
                event(logging.INFO, "NETWORK", 23016, "listener", "Waiting for connections",
                      port=self.config.port, workers=len(self.seats),
                      ssl="off" if self.config.tls_mode == "disabled" else "on")
            if not announced and time.monotonic() - started > START_TIMEOUT:
                event(logging.ERROR, "CONTROL", LOG_WORKER_GIVEN_UP, "supervisor", "Workers did not start in time")
                self.exit_code = EXIT_DATA_DIR
                self.stopping = True
        self.stop_all()
        return self.exit_code

    def stop_all(self) -> None:
        live = [s.proc for s in self.seats if s.proc is not None and s.proc.poll() is None]
        for proc in live:
            proc.send_signal(signal.SIGTERM)
        until = time.monotonic() + self.config.shutdown_grace + 10.0
        for proc in live:
            try:
                proc.wait(max(0.1, until - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for seat in self.seats:
            if seat.ready_fd >= 0:
                os.close(seat.ready_fd)
                seat.ready_fd = -1


def _reserve_ports(config: ServerConfig) -> tuple[int, list[socket.socket]]:
    """Bind (without listening) every address with SO_REUSEPORT: the workers join the same
    ports, and port 0 becomes one chosen port for all of them. Raises OSError."""
    port, held = config.port, []
    try:
        for host in config.bind:
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                # first without SO_REUSEPORT: that fails if anyone holds the port, also another
                # --workers server of this user, which the reservation alone would join
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind((host, port))
                port = probe.getsockname()[1]
            sock = socket.socket(family, socket.SOCK_STREAM)
            held.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((host, port))
    except BaseException:
        for sock in held:
            sock.close()
        raise
    return port, held


def supervise(config: ServerConfig) -> int:
    stream = None
    if config.log_path:
        try:
            stream = open(config.log_path, "a" if config.log_append else "w", encoding="utf-8")
        except OSError as exc:
            print(f"ginkgodb: cannot open the log file {config.log_path}: {exc.strerror}", file=sys.stderr)
            return EXIT_BAD_OPTIONS
    configure(config.log_level, stream)
    why = refusal(config)
    if why is not None:
        event(logging.ERROR, "CONTROL", 20574, "initandlisten", "Error during global initialization", error=why)
        print(f"ginkgodb: {why}", file=sys.stderr)
        return EXIT_BAD_OPTIONS
    assert config.dbpath is not None
    event(logging.INFO, "CONTROL", 4615611, "initandlisten", "ginkgodb starting", pid=os.getpid(),
          port=config.port, dbPath=config.dbpath, workers=config.workers,
          version=__version__, mongodbVersion=MONGODB_VERSION)
    from ..storage.lmdb_engine import lock_directory
    try:
        lock_fds = lock_directory(config.dbpath)
    except (StorageError, OSError) as exc:
        why = (f"DBPathInUse: Unable to lock the data directory {config.dbpath}: another ginkgodb "
               "(or other process) is already using it") if isinstance(exc, StorageError) and exc.kind == "locked" \
            else f"Cannot open the data directory {config.dbpath}: {exc}"
        event(logging.ERROR, "STORAGE", 20557, "initandlisten", "Cannot start", error=why)
        print(f"ginkgodb: {why}", file=sys.stderr)
        return EXIT_DATA_DIR
    try:
        port, reserved = _reserve_ports(config)
    except OSError as exc:
        why = f"Failed to listen on {','.join(config.bind)}:{config.port}: {exc.strerror or exc}"
        event(logging.ERROR, "NETWORK", 23024, "listener", "Error setting up listener", error=why)
        print(f"ginkgodb: {why}", file=sys.stderr)
        for fd in lock_fds:
            os.close(fd)
        return EXIT_NET_ERROR
    socket_dir = tempfile.mkdtemp(prefix="ginkgodb-workers-")   # owner-only (0700)
    supervisor = Supervisor(dataclasses.replace(config, port=port), lock_fds, socket_dir)
    previous = {sig: signal.signal(sig, supervisor.request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return supervisor.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sock in reserved:
            sock.close()
        for fd in lock_fds:
            os.close(fd)
        shutil.rmtree(socket_dir, ignore_errors=True)
        event(logging.INFO, "CONTROL", 20565, "SignalHandler", "Now exiting", exitCode=supervisor.exit_code)
