"""etcd for the replica-set tests: Debian's `etcd-server`, installed with apt-get on first use when
the tests run as root; otherwise the tests skip with the reason."""
from __future__ import annotations

import subprocess

from ginkgodb.cluster import find_etcd
from support.installing import apt_install

APT_PACKAGE = "etcd-server"


def ensure_etcd() -> str:
    """The etcd executable, installing Debian's package when missing and possible."""
    found = find_etcd()
    if not found:
        apt_install([APT_PACKAGE], lambda: bool(find_etcd()), "the replica-set tests")
        found = find_etcd()
    assert found
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
        """Until etcd serves a read: it accepts connections before it has elected itself leader,
        and a request sent meanwhile waits, so a test's own requests could be served in
        another order than sent (a watch's start read after the test's first put)."""
        import time

        import httpx
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                reply = httpx.post(f"{self.url}/v3/kv/range", json={"key": "AA==", "count_only": True}, timeout=0.5)
                if reply.status_code == 200:
                    return
            except httpx.HTTPError:
                pass
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
