"""Exhaust cursors over real sockets: a getMore with exhaustAllowed streams replies with
moreToCome until the cursor is done, and pymongo's CursorType.EXHAUST reads them."""
from __future__ import annotations

import socket
import struct

import bson
import pymongo
import pytest
from pymongo.cursor import CursorType
from support.sockets import recv_exactly

from ginkgodb.server.testing import running_server

MORE_TO_COME = 1 << 1
EXHAUST_ALLOWED = 1 << 16


@pytest.fixture(scope="module")
def server():
    with running_server() as address:
        yield address


def send(sock: socket.socket, doc: dict, request_id: int, flags: int = 0) -> None:
    body = struct.pack("<I", flags) + b"\x00" + bson.encode(doc)
    sock.sendall(struct.pack("<iiii", 16 + len(body), request_id, 0, 2013) + body)


def receive(sock: socket.socket) -> tuple[int, int, int, dict]:
    """(requestID, responseTo, flags, reply)"""
    header = recv_exactly(sock, 16)
    length, request_id, response_to, op_code = struct.unpack("<iiii", header)
    body = recv_exactly(sock, length - 16)
    assert op_code == 2013
    return request_id, response_to, struct.unpack_from("<I", body)[0], bson.decode(body[5:])


@pytest.fixture
def loaded(server):
    client = pymongo.MongoClient(*server)
    client.ex.c.drop()
    client.ex.c.insert_many([{"_id": i} for i in range(7)])
    yield client
    client.close()


def test_an_exhaust_get_more_streams_replies_chained_on_the_previous_one(server, loaded):
    with socket.create_connection(server, timeout=5) as sock:
        send(sock, {"find": "c", "batchSize": 2, "$db": "ex"}, 1)
        _, _, flags, first = receive(sock)
        assert flags == 0 and len(first["cursor"]["firstBatch"]) == 2
        cid = first["cursor"]["id"]
        send(sock, {"getMore": cid, "collection": "c", "batchSize": 2, "$db": "ex"}, 2, EXHAUST_ALLOWED)
        replies = []
        expect_response_to = 2
        while True:
            request_id, response_to, flags, reply = receive(sock)
            assert response_to == expect_response_to  # each reply answers the previous one
            expect_response_to = request_id
            replies.append((flags, reply))
            if not flags & MORE_TO_COME:
                break
        assert [[d["_id"] for d in r["cursor"]["nextBatch"]] for _, r in replies] == [[2, 3], [4, 5], [6]]
        assert [bool(f & MORE_TO_COME) for f, _ in replies] == [True, True, False]
        assert replies[-1][1]["cursor"]["id"] == 0
        send(sock, {"ping": 1, "$db": "admin"}, 3)  # the connection serves requests again
        assert receive(sock)[1:] == (3, 0, {"ok": 1.0})


def test_without_exhaust_allowed_a_get_more_gets_one_reply(server, loaded):
    with socket.create_connection(server, timeout=5) as sock:
        send(sock, {"find": "c", "batchSize": 2, "$db": "ex"}, 1)
        cid = receive(sock)[3]["cursor"]["id"]
        send(sock, {"getMore": cid, "collection": "c", "batchSize": 2, "$db": "ex"}, 2)
        _, response_to, flags, reply = receive(sock)
        assert (response_to, flags, len(reply["cursor"]["nextBatch"])) == (2, 0, 2)
        send(sock, {"ping": 1, "$db": "admin"}, 3, EXHAUST_ALLOWED)
        assert receive(sock)[1:3] == (3, 0)  # only getMore streams


def test_an_error_ends_the_stream(server, loaded):
    with socket.create_connection(server, timeout=5) as sock:
        send(sock, {"getMore": 12345, "collection": "c", "$db": "ex"}, 1, EXHAUST_ALLOWED)
        _, response_to, flags, reply = receive(sock)
        assert (response_to, flags, reply["code"]) == (1, 0, 43)


def test_pymongo_exhaust_cursors_read_the_stream(server, loaded):
    loaded.ex.big.drop()
    loaded.ex.big.insert_many([{"i": i} for i in range(1000)])
    client = pymongo.MongoClient(*server)
    try:
        docs = list(client.ex.big.find({}, cursor_type=CursorType.EXHAUST, batch_size=100))
        assert [d["i"] for d in docs] == list(range(1000))
        assert client.ex.big.find_one({"i": 5})["i"] == 5  # the pool's connections still work
    finally:
        client.close()
