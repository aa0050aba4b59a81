"""Raw-socket helpers for tests that speak the wire protocol by hand."""
from __future__ import annotations

import random
import socket


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    """`n` bytes from `sock`; ConnectionError when the peer closes first."""
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port_range(n: int) -> int:
    """A first port P with P..P+n-1 free on loopback (a cluster's members take consecutive ports),
    below the kernel's ephemeral range: there no outgoing connection's source port or `bind(0)`
    elsewhere in a parallel run can take a reserved port before its member binds it."""
    low = _ephemeral_low()
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(10_000, max(10_001, low - n))
        socks = []
        try:
            for i in range(n):
                sock = socket.socket()
                socks.append(sock)
                sock.bind(("127.0.0.1", base + i))
            return base
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
    raise RuntimeError("no free ports")
