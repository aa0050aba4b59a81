"""Raw-socket helpers for tests that speak the wire protocol by hand."""
from __future__ import annotations

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
