"""The asyncio server end to end over real sockets: handshake, framing, errors, limits."""
from __future__ import annotations

import socket
import struct

import bson
import pymongo
import pytest
from pymongo.errors import OperationFailure
from support.sockets import recv_exactly

from ginkgodb.server.testing import running_server


@pytest.fixture(scope="module")
def server():
    with running_server() as address:
        yield address


@pytest.fixture
def client(server):
    c = pymongo.MongoClient(*server, serverSelectionTimeoutMS=5000)
    yield c
    c.close()


def op_msg(doc: dict, request_id: int = 1, flags: int = 0) -> bytes:
    body = struct.pack("<I", flags) + b"\x00" + bson.encode(doc)
    return struct.pack("<iiii", 16 + len(body), request_id, 0, 2013) + body


def op_query(doc: dict, namespace: str = "admin.$cmd", request_id: int = 1) -> bytes:
    body = struct.pack("<i", 0) + namespace.encode() + b"\x00" + struct.pack("<ii", 0, -1) + bson.encode(doc)
    return struct.pack("<iiii", 16 + len(body), request_id, 0, 2004) + body


def recv_message(sock: socket.socket) -> tuple[int, int, bytes]:
    header = recv_exactly(sock, 16)
    length, _, response_to, op_code = struct.unpack("<iiii", header)
    return op_code, response_to, recv_exactly(sock, length - 16)


def raw_command(sock: socket.socket, doc: dict, request_id: int = 1) -> dict:
    sock.sendall(op_msg(doc, request_id))
    op_code, response_to, body = recv_message(sock)
    assert (op_code, response_to) == (2013, request_id)
    return bson.decode(body[5:])


@pytest.fixture
def sock(server):
    s = socket.create_connection(server, timeout=5)
    yield s
    s.close()


def test_pymongo_connects_and_pings(client):
    assert client.admin.command("ping") == {"ok": 1.0}
    assert client.server_info()["versionArray"][:2] == [7, 0]


def test_hello_over_the_wire_numbers_connections(sock, server):
    first = raw_command(sock, {"hello": 1, "$db": "admin"})
    with socket.create_connection(server, timeout=5) as other:
        second = raw_command(other, {"hello": 1, "$db": "admin"})
    assert second["connectionId"] > first["connectionId"]
    assert first["maxWireVersion"] == 21 and first["topologyVersion"]["counter"] == 0


def test_op_query_handshake_is_answered_with_op_reply(sock):
    sock.sendall(op_query({"$query": {"ismaster": 1, "helloOk": True}}, request_id=44))
    op_code, response_to, body = recv_message(sock)
    assert (op_code, response_to) == (1, 44)
    reply = bson.decode(body[20:])
    assert reply["ismaster"] is True and reply["helloOk"] is True


def test_op_query_for_other_commands_is_352(sock):
    sock.sendall(op_query({"find": "c"}, namespace="test.$cmd"))
    _, _, body = recv_message(sock)
    assert bson.decode(body[20:])["code"] == 352


def test_more_to_come_request_gets_no_reply(sock):
    sock.sendall(op_msg({"endSessions": [], "$db": "admin"}, request_id=5, flags=2))
    assert raw_command(sock, {"ping": 1, "$db": "admin"}, request_id=6) == {"ok": 1.0}


def test_pipelined_requests_are_answered_in_order(sock):
    sock.sendall(b"".join(op_msg({"ping": 1, "$db": "admin"}, request_id=i) for i in range(1, 6)))
    assert [recv_message(sock)[1] for _ in range(5)] == [1, 2, 3, 4, 5]


def test_malformed_message_gets_an_error_reply_and_the_connection_lives(sock):
    reply = raw_command(sock, {"ping": 1})  # no $db
    assert reply["code"] == 40571
    assert raw_command(sock, {"ping": 1, "$db": "admin"}) == {"ok": 1.0}


def test_garbage_closes_only_that_connection(sock, client):
    sock.sendall(struct.pack("<i", 3) + b"garbage-garbage")
    assert sock.recv(10) == b""
    assert client.admin.command("ping")["ok"] == 1.0


def test_unknown_command_is_59(client):
    with pytest.raises(OperationFailure) as info:
        client.admin.command("noSuchThing")
    assert info.value.code == 59 and "no such command: 'noSuchThing'" in str(info.value)


@pytest.mark.parametrize("compressor", ["zlib", "snappy"])
def test_pymongo_with_compression(server, compressor):
    c = pymongo.MongoClient(*server, compressors=compressor, serverSelectionTimeoutMS=5000)
    try:
        assert c.admin.command("ping")["ok"] == 1.0
        assert c.admin.command("buildInfo")["version"].startswith("7.0")
    finally:
        c.close()


def test_server_status_counts_connections_and_commands(client):
    before = client.admin.command("serverStatus")
    client.admin.command("ping")
    after = client.admin.command("serverStatus")
    assert after["opcounters"]["command"] >= before["opcounters"]["command"] + 2
    assert after["connections"]["current"] >= 1
    assert after["network"]["numRequests"] > before["network"]["numRequests"]


def test_whatsmyuri_reports_the_client_address(sock):
    you = raw_command(sock, {"whatsmyuri": 1, "$db": "admin"})["you"]
    host, port = sock.getsockname()
    assert you == f"{host}:{port}"


def test_oversized_body_is_10334_and_connection_survives(sock):
    reply = raw_command(sock, {"insert": "c", "$db": "t", "pad": "x" * (16 * 1024 * 1024 + 16 * 1024)})
    assert reply["code"] == 10334 and reply["codeName"] == "BSONObjectTooLarge"
    assert raw_command(sock, {"ping": 1, "$db": "admin"})["ok"] == 1.0


def test_random_bytes_never_take_the_server_down(server, client):
    import random
    rng = random.Random(1234)
    seeds = [op_msg({"ping": 1, "$db": "admin"}), op_query({"ismaster": 1})]
    for i in range(150):
        if i % 2:
            data = bytearray(rng.choice(seeds))
            for _ in range(rng.randint(1, 6)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        else:
            data = bytearray(rng.randbytes(rng.randint(1, 200)))
        with socket.create_connection(server, timeout=5) as s:
            s.sendall(bytes(data))
            s.shutdown(socket.SHUT_WR)
            s.settimeout(2)
            try:
                while s.recv(65536):
                    pass
            except (TimeoutError, ConnectionResetError):
                pass
    assert client.admin.command("ping") == {"ok": 1.0}
