"""What one client can make the server hold: connections (--maxConns) and buffered bytes."""
from __future__ import annotations

import logging
import socket
import struct
import threading
import time

import bson
import pymongo
import pytest
from support.sockets import recv_exactly

from ginkgodb.engine import Engine
from ginkgodb.server.config import ServerConfig
from ginkgodb.server.lifecycle import Server, supported_connections
from ginkgodb.server.protocol import ConnectionProtocol
from ginkgodb.server.testing import running_server

MIB = 1024 * 1024


def op_msg(doc: dict, request_id: int = 1) -> bytes:
    body = struct.pack("<I", 0) + b"\x00" + bson.encode(doc)
    return struct.pack("<iiii", 16 + len(body), request_id, 0, 2013) + body


def hello(sock: socket.socket) -> dict:
    sock.sendall(op_msg({"hello": 1, "$db": "admin"}))
    header = recv_exactly(sock, 16)
    length = struct.unpack("<i", header[:4])[0]
    return bson.decode(recv_exactly(sock, length - 16)[5:])


def closed_by_server(sock: socket.socket) -> bool:
    """True when the server closed the connection without a word."""
    try:
        sock.sendall(op_msg({"hello": 1, "$db": "admin"}))
        return sock.recv(16) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True


# -- --maxConns -------------------------------------------------------------------------------
def test_connections_over_max_conns_are_closed_counted_and_logged_once(caplog):
    caplog.set_level(logging.INFO, logger="ginkgodb")
    with running_server(max_connections=3, quiet=True) as address:
        kept = [socket.create_connection(address, timeout=5) for _ in range(3)]
        for s in kept:
            assert hello(s)["ok"] == 1.0
        refused = [socket.create_connection(address, timeout=5) for _ in range(4)]
        assert all(closed_by_server(s) for s in refused)
        kept[0].sendall(op_msg({"serverStatus": 1, "$db": "admin"}))
        length = struct.unpack("<i", recv_exactly(kept[0], 16)[:4])[0]
        status = bson.decode(recv_exactly(kept[0], length - 16)[5:])
        connections = status["connections"]
        assert connections["rejected"] == 4
        assert connections["current"] == 3 and connections["available"] == 0
        assert connections["totalCreated"] == 3  # as mongod: refused connections were never created
        refusals = [r for r in caplog.records if getattr(r, "mongo", (None, None))[1] == 22942]
        assert len(refusals) == 1  # once per episode, not once per refused connection
        kept.pop().close()
        time.sleep(0.2)
        with socket.create_connection(address, timeout=5) as again:
            assert hello(again)["ok"] == 1.0  # room again: accepted
        for s in kept + refused:
            s.close()


def test_the_connection_limit_never_exceeds_80_percent_of_the_open_file_limit():
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert supported_connections(10) == min(10, int(soft * 0.8))
    if soft != resource.RLIM_INFINITY:
        assert supported_connections(10 ** 9) == int(soft * 0.8)


def test_a_refused_connection_is_cheap():
    """Measured: the cost of one refused connection (connect, refusal, close) on loopback."""
    with running_server(max_connections=1, quiet=True) as address:
        with socket.create_connection(address, timeout=5) as holder:
            hello(holder)
            n = 300
            start = time.perf_counter()
            for _ in range(n):
                with socket.create_connection(address, timeout=5) as s:
                    assert s.recv(16) == b""
            per_refusal = (time.perf_counter() - start) / n
            assert hello(holder)["ok"] == 1.0  # the held connection never noticed
    print(f"refused connection round trip: {per_refusal * 1e6:.0f} us")
    assert per_refusal < 0.05


# -- bytes buffered per connection -------------------------------------------------------------
class FakeTransport:
    def __init__(self) -> None:
        self.paused = False
        self.pauses = 0
        self.written = bytearray()
        self.closed = False

    def get_extra_info(self, name: str, default=None):
        return ("127.0.0.1", 40000) if name == "peername" else default

    def pause_reading(self) -> None:
        self.paused, self.pauses = True, self.pauses + 1

    def resume_reading(self) -> None:
        self.paused = False

    def write(self, data: bytes) -> None:
        self.written += data

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def protocol():
    engine = Engine.open(None)
    server = Server(ServerConfig(port=0, dbpath=None, quiet=True, max_pipelined_bytes=4 * MIB), engine)
    conn = ConnectionProtocol(server)
    transport = FakeTransport()
    conn.connection_made(transport)
    yield conn, transport
    server.pool.shutdown(wait=True)
    engine.close()


def _busy(conn: ConnectionProtocol) -> None:
    """Pretend a request is running in a worker: later bytes can only be buffered."""
    conn.job = object()  # type: ignore[assignment]


def _feed(conn: ConnectionProtocol, data: bytes, chunk: int = 256 * 1024) -> int:
    """Feed like asyncio does (at most 256 KiB per call) while reading is not paused; returns
    the bytes actually delivered."""
    transport = conn.transport
    sent = 0
    while sent < len(data) and not transport.paused:
        conn.data_received(data[sent:sent + chunk])
        sent += chunk
    return min(sent, len(data))


def test_pipelined_requests_stop_reading_past_the_bound_then_all_get_answers(protocol):
    conn, transport = protocol
    _busy(conn)
    pings = b"".join(op_msg({"ping": 1, "$db": "admin", "pad": "x" * (512 * 1024)}, i) for i in range(1, 41))
    delivered = _feed(conn, pings)
    assert transport.paused and delivered < len(pings)
    assert conn.wire.buffered <= 4 * MIB + 256 * 1024
    conn.job = None
    while delivered < len(pings):  # the client keeps sending as reading resumes
        conn._pump()
        delivered += _feed(conn, pings[delivered:])
    conn._pump()
    assert not transport.paused and conn.wire.buffered == 0
    replies, at = [], 0
    while at < len(transport.written):
        length, _, response_to, _ = struct.unpack_from("<iiii", transport.written, at)
        replies.append(response_to)
        at += length
    assert replies == list(range(1, 41))  # every request answered, in order


def test_a_partial_frame_is_bounded_by_its_declared_length(protocol):
    conn, transport = protocol
    _busy(conn)
    big = op_msg({"ping": 1, "$db": "admin", "pad": "x" * (10 * MIB)}, 7)
    assert _feed(conn, big[:-1]) == len(big) - 1
    assert not transport.paused  # the first message must be able to complete
    _feed(conn, big[-1:] + op_msg({"ping": 1, "$db": "admin"}, 8))
    assert transport.paused  # whole and waiting: nothing more is read
    assert conn.wire.buffered < len(big) + 256 * 1024


def test_a_declared_length_over_max_message_size_closes_the_connection(protocol):
    conn, transport = protocol
    conn.data_received(struct.pack("<iiii", 48_000_001, 1, 0, 2013) + b"\x00" * 64)
    assert transport.closed


def test_pipelining_pymongo_clients_are_unaffected():
    with running_server(max_pipelined_bytes=1 * MIB, quiet=True) as address:
        client = pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000)
        try:
            docs = [{"_id": i, "pad": "y" * 200_000} for i in range(60)]
            client.t.c.insert_many(docs)  # ~12 MB in a few large messages, past the 1 MiB bound
            assert client.t.c.count_documents({}) == 60
            threads = [threading.Thread(target=lambda: client.t.c.find_one({"_id": 3})) for _ in range(20)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(10)
        finally:
            client.close()
