"""OP_COMPRESSED: decompress requests, answer with the request's compressor."""
from __future__ import annotations

import struct

import pytest
from unit.wire.wire_messages import command, compressed, decompress_reply, op_query, parse_reply

from ginkgodb.wire import ProtocolError, WireConnection, negotiate

PING = {"ping": 1, "$db": "admin"}


def parse(data: bytes):
    conn = WireConnection()
    conn.receive_data(data)
    return conn, conn.next_request()


@pytest.mark.parametrize("cid", [0, 1, 2, 3], ids=["noop", "snappy", "zlib", "zstd"])
def test_compressed_request_is_answered_with_the_same_compressor(cid):
    conn, req = parse(compressed(command(PING, request_id=11), cid))
    assert req.command == PING and req.compressor_id == cid
    got_cid, reply = decompress_reply(conn.encode_reply(req, {"ok": 1.0}))
    assert got_cid == cid
    assert parse_reply(reply)[1:] == (11, {"ok": 1.0})


def test_hello_replies_are_never_compressed():
    conn, req = parse(compressed(command({"hello": 1, "$db": "admin"}), 2))
    op, _, doc = parse_reply(conn.encode_reply(req, {"isWritablePrimary": True, "ok": 1.0}))
    assert op == 2013 and doc["ok"] == 1.0


def test_compressed_op_query_gets_compressed_op_reply():
    conn, req = parse(compressed(op_query("admin.$cmd", {"buildinfo": 1}), 2))
    cid, reply = decompress_reply(conn.encode_reply(req, {"ok": 1.0}))
    assert cid == 2 and parse_reply(reply)[0] == 1


def test_negotiation_keeps_the_clients_order_and_drops_unknown_names():
    assert negotiate(["zstd", "none", "zlib", 3, "snappy"]) == ["zstd", "zlib", "snappy"]
    assert negotiate(["none"]) == []


def test_unknown_compressor_closes_the_connection():
    conn = WireConnection()
    conn.receive_data(compressed(command(PING), 9, packed=b"junk"))
    with pytest.raises(ProtocolError) as info:
        conn.next_request()
    assert info.value.fatal


def test_size_mismatch_closes_the_connection():
    data = bytearray(compressed(command(PING), 2))
    struct.pack_into("<i", data, 20, 1000)  # claim a larger uncompressed size
    conn = WireConnection()
    conn.receive_data(bytes(data))
    with pytest.raises(ProtocolError) as info:
        conn.next_request()
    assert info.value.fatal


def test_nested_compression_closes_the_connection():
    inner = compressed(command(PING), 0)
    conn = WireConnection()
    conn.receive_data(compressed(inner[:8] + struct.pack("<i", 2012) + inner[12:], 0))
    with pytest.raises(ProtocolError) as info:
        conn.next_request()
    assert info.value.fatal
