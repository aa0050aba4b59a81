"""Mutated wire frames against a live server: a bounded, reproducible run (the codec-level
fuzzing is tests/unit/wire/test_wire_fuzz.py). The server must answer or close each connection,
never crash or hang, and serve ordinary clients afterwards with their data intact."""
from __future__ import annotations

import random
import socket
import struct

import bson
import pymongo
from support.sockets import recv_exactly
from unit.wire.test_wire_fuzz import SEEDS
from unit.wire.wire_messages import command, kind0, kind1, op_msg

from ginkgodb.server.testing import running_server

FRAMES = 3000
SENTINEL_ID = 0x5EED
_MAX_PADDED = 64 * 1024

EXTRA_SEEDS = [
    op_msg(kind0({"insert": "c", "$db": "fuzz"}), kind1("documents", [{"_id": 1, "a": [1, {"b": "x"}]}])),
    command({"find": "c", "filter": {"a": {"$gt": 0}}, "$db": "fuzz"}),
    command({"update": "c", "updates": [{"q": {}, "u": {"$inc": {"n": 1}}, "multi": True}], "$db": "fuzz"}),
    command({"aggregate": "c", "pipeline": [{"$group": {"_id": "$a"}}], "cursor": {}, "$db": "fuzz"}),
    command({"hello": 1, "client": {"driver": {"name": "fuzz"}}, "$db": "admin"}),
]


def mutate(rng: random.Random, seed: bytes) -> bytes:
    data = bytearray(seed)
    for _ in range(rng.randint(1, 6)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    if rng.random() < 0.2:
        data = data[: rng.randint(4, len(data))]
    if rng.random() < 0.1:
        data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
    # a declared length past the bytes sent would wait for more: pad or fix it; bytes past the
    # declared length would start another frame of unknown length: cut them
    declared = struct.unpack_from("<i", data)[0]
    if 16 <= declared < len(data):
        del data[declared:]
    elif len(data) < declared <= _MAX_PADDED:
        data += b"\x00" * (declared - len(data))
    elif len(data) < declared <= 48_000_000:
        struct.pack_into("<i", data, 0, len(data))
    return bytes(data)


def exchange(sock: socket.socket, frame: bytes) -> bool:
    """Send a frame and a ping behind it; read until the ping's answer. False: the server closed
    the connection (as it must on a fatal framing error)."""
    sentinel = command({"ping": 1, "$db": "admin"}, request_id=SENTINEL_ID)
    try:
        sock.sendall(frame + sentinel)
        while True:
            header = recv_exactly(sock, 16)
            length, _, response_to, op_code = struct.unpack("<iiii", header)
            assert 16 < length <= 48_000_000 and op_code in (1, 2012, 2013)
            body = recv_exactly(sock, length - 16)
            if op_code == 2013 and response_to == SENTINEL_ID:
                assert bson.decode(body[5:])["ok"] == 1.0
                return True
    except ConnectionError:
        return False


def test_mutated_frames_against_a_live_server():
    rng = random.Random(20240808)
    seeds = SEEDS + EXTRA_SEEDS
    with running_server(quiet=True) as address:
        keeper = pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000)
        keeper.keep.c.insert_many([{"_id": i, "v": i * i} for i in range(50)])
        sock = socket.create_connection(address, timeout=10)
        closed = 0
        try:
            for _ in range(FRAMES):
                if not exchange(sock, mutate(rng, rng.choice(seeds))):
                    closed += 1
                    sock.close()
                    sock = socket.create_connection(address, timeout=10)
        finally:
            sock.close()
        assert closed > 0  # some mutations were fatal, and the server closed only those connections
        assert keeper.admin.command("ping")["ok"] == 1.0
        assert keeper.admin.command("serverStatus")["connections"]["current"] >= 1
        assert list(keeper.keep.c.find().sort("_id", 1)) == [{"_id": i, "v": i * i} for i in range(50)]
        keeper.close()
