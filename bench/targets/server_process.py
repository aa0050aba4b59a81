"""A database server run as a child process on loopback, with pymongo connected to it.

Servers run in their own process so the client's and the server's Python interpreters do not
share a GIL, as they would not in production.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

import pymongo

START_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def repo_env() -> dict[str, str]:
    """Environment for children: the repository root on PYTHONPATH (ginkgodb is not installed)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


class ServerProcess:
    """Start, connect to, measure and stop one server; `argv(port)` builds its command line."""

    def __init__(self, argv: Callable[[int], Sequence[str]], log_path: str, cwd: str) -> None:
        self._argv = argv
        self._log_path = log_path
        self._cwd = cwd
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.peak_rss = 0

    def start(self) -> pymongo.MongoClient:
        self.port = free_port()
        log = open(self._log_path, "ab")
        self.proc = subprocess.Popen(list(self._argv(self.port)), stdout=log, stderr=subprocess.STDOUT,
                                     cwd=self._cwd, env=repo_env())
        log.close()
        self._wait_listening()
        client = pymongo.MongoClient("127.0.0.1", self.port, directConnection=True,
                                     serverSelectionTimeoutMS=30_000)
        client.admin.command("ping")
        return client

    def stop(self) -> None:
        """Graceful stop (SIGTERM, then SIGINT, then SIGKILL), remembering peak memory first."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        self.peak_rss = max(self.peak_rss, _vm_hwm(proc.pid))
        for sig, wait in ((signal.SIGTERM, 20), (signal.SIGINT, 10), (signal.SIGKILL, 10)):
            if proc.poll() is not None:
                break
            proc.send_signal(sig)
            try:
                proc.wait(wait)
            except subprocess.TimeoutExpired:
                continue

    def current_peak_rss(self) -> int:
        if self.proc is not None:
            self.peak_rss = max(self.peak_rss, _vm_hwm(self.proc.pid))
        return self.peak_rss

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with code {self.proc.returncode}: {self._log_tail()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server did not listen within {START_TIMEOUT:.0f} s: {self._log_tail()}")

    def _log_tail(self, limit: int = 600) -> str:
        try:
            with open(self._log_path, "rb") as f:
                text = f.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""
        return text[-limit:].replace("\n", " | ")


def python_argv(*args: str) -> list[str]:
    return [sys.executable, *args]


def _vm_hwm(pid: int) -> int:
    """Peak resident set of a live process in bytes (Linux /proc), 0 if unknown."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
