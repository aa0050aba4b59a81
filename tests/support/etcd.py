"""etcd for the replica-set tests: Debian's `etcd-server`, installed with apt-get on first use when
the tests run as root; otherwise the tests skip with the reason."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ginkgodb.cluster import find_etcd

APT_PACKAGE = "etcd-server"
APT_TIMEOUT = 600


def _apt(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(["apt-get", *args], capture_output=True, text=True, env=env, timeout=APT_TIMEOUT)


def ensure_etcd() -> str:
    """The etcd executable, installing Debian's package when missing and possible."""
    found = find_etcd()
    if found:
        return found
    if shutil.which("apt-get") is None:
        pytest.skip("etcd missing and no apt-get to install it (the replica-set tests need etcd)")
    if os.geteuid() != 0:
        pytest.skip(f"etcd missing; installing it needs root (apt-get install {APT_PACKAGE})")
    try:
        done = _apt("install", "-y", "-q", APT_PACKAGE)
        if done.returncode != 0:   # a fresh machine has no package lists yet
            _apt("update", "-q")
            done = _apt("install", "-y", "-q", APT_PACKAGE)
    except subprocess.TimeoutExpired:
        pytest.skip(f"apt-get install {APT_PACKAGE} timed out")
    found = find_etcd()
    if done.returncode != 0 or not found:
        pytest.skip(f"apt-get install {APT_PACKAGE} failed: {done.stderr.strip()[-500:]}")
    return found


class EtcdProcess:
    """A one-node etcd on loopback, in its own data directory."""

    def __init__(self, data_dir) -> None:
        import socket

        def free() -> int:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                return s.getsockname()[1]
        self.client_port, peer = free(), free()
        self.url = f"http://127.0.0.1:{self.client_port}"
        self.argv = [ensure_etcd(), "--name", "t", "--data-dir", str(data_dir), "--listen-client-urls", self.url,
                     "--advertise-client-urls", self.url, "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                     "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                     "--initial-cluster", f"t=http://127.0.0.1:{peer}"]
        self.log = open(f"{data_dir}.log", "ab")
        self.proc = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT)
        self._wait()

    def _wait(self) -> None:
        import socket
        import time
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.client_port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("etcd did not start")

    def pause(self) -> None:
        import signal
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        import signal
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        self.resume()
        self.proc.terminate()
        self.proc.wait(10)
        self.log.close()
