"""Start a server for tests and benchmarks: in a thread of this process, or as a subprocess.

    with running_server() as (host, port):              # in-memory, in a thread
        MongoClient(host, port).admin.command("ping")
    with running_server(path, subprocess=True) as (host, port):   # `ginkgodb serve` on a free port
        ...
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess as sp
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

from .config import ServerConfig

HOST = "127.0.0.1"


@contextlib.contextmanager
def running_server(path: Optional[str] = None, *, subprocess: bool = False,
                   **config: Any) -> Iterator[tuple[str, int]]:
    """A running server on a free loopback port; yields (host, port), stops it on exit.

    `path` is the data directory (None: in memory). Extra keyword arguments are ServerConfig
    fields (thread mode) or `serve` options such as quiet=True, slow_ms=5 (subprocess mode).
    """
    runner = _subprocess_server if subprocess else _thread_server
    with runner(path, config) as port:
        yield HOST, port


@contextlib.contextmanager
def _thread_server(path: Optional[str], options: dict[str, Any]) -> Iterator[int]:
    from ..engine import Engine
    from .lifecycle import Server

    config = ServerConfig(port=0, bind=(HOST,), dbpath=path, **options)
    engine = Engine.open(path, **config.storage_options())
    server = Server(config, engine)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.start())
        except BaseException as exc:  # reported to the caller below
            failure.append(exc)
            ready.set()
            return
        ready.set()
        loop.run_until_complete(server.serve_until_stopped())

    thread = threading.Thread(target=run, name="ginkgodb-test-server", daemon=True)
    thread.start()
    ready.wait(30)
    try:
        if failure:
            raise failure[0]
        yield server.port  # type: ignore[misc]
    finally:
        server.request_stop()
        thread.join(30)
        loop.close()
        engine.close()


@contextlib.contextmanager
def _subprocess_server(path: Optional[str], options: dict[str, Any]) -> Iterator[int]:
    args = [sys.executable, "-m", "ginkgodb.cli", "serve", "--port", "0", "--bind", HOST]
    args += ["--dbpath", str(path)] if path else ["--in-memory"]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        args += [flag] if value is True else [] if value is False else [flag, str(value)]
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = sp.Popen(args, stdout=sp.PIPE, stderr=sp.STDOUT, text=True, env=env)
    try:
        port = _wait_for_port(proc)
        yield port
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except sp.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_for_port(proc: sp.Popen) -> int:
    """Read the log until "Waiting for connections"; keep draining it afterwards."""
    seen = []
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.append(line)
        if '"Waiting for connections"' in line:
            port = json.loads(line)["attr"]["port"]
            threading.Thread(target=_drain, args=(proc.stdout,), daemon=True).start()
            return int(port)
    raise RuntimeError("ginkgodb serve exited before listening:\n" + "".join(seen[-20:]))


def _drain(stream) -> None:
    for _ in stream:
        pass
