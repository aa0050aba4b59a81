"""Legacy OP_QUERY: the handshake only, answered with OP_REPLY."""
from __future__ import annotations

import struct

import pytest
from unit.wire.wire_messages import op_query, parse_reply

from ginkgodb.wire import ProtocolError, WireConnection


def parse(data: bytes):
    conn = WireConnection()
    conn.receive_data(data)
    return conn, conn.next_request()


def failure(data: bytes) -> tuple[ProtocolError, bytes]:
    conn = WireConnection()
    conn.receive_data(data)
    with pytest.raises(ProtocolError) as info:
        conn.next_request()
    return info.value, conn.encode_error(info.value)


@pytest.mark.parametrize("name", ["hello", "isMaster", "ismaster"])
def test_handshake_commands_are_accepted_with_db_from_namespace(name):
    _, req = parse(op_query("admin.$cmd", {name: 1, "helloOk": True}))
    assert req.command == {name: 1, "helloOk": True, "$db": "admin"}
    assert req.op_code == 2004


def test_query_wrapping_is_removed():
    _, req = parse(op_query("admin.$cmd", {"$query": {"ismaster": 1}, "$readPreference": {"mode": "primary"}}))
    assert req.command == {"ismaster": 1, "$db": "admin"}


def test_reply_is_op_reply_with_await_capable_flag():
    conn, req = parse(op_query("admin.$cmd", {"isMaster": 1}, request_id=5))
    out = conn.encode_reply(req, {"ismaster": True, "ok": 1.0})
    flags, cursor_id, start, returned = struct.unpack_from("<iqii", out, 16)
    assert (flags, cursor_id, start, returned) == (8, 0, 0, 1)
    op, response_to, doc = parse_reply(out)
    assert (op, response_to, doc) == (1, 5, {"ismaster": True, "ok": 1.0})


def test_other_commands_are_352_with_mongods_message():
    err, out = failure(op_query("test.$cmd", {"find": "c"}))
    assert err.code == 352 and not err.fatal
    _, _, doc = parse_reply(out)
    assert doc == {"ok": 0.0, "code": 352, "codeName": "UnsupportedOpQueryCommand",
                   "errmsg": "Unsupported OP_QUERY command: find. The client driver may require an "
                             "upgrade. For more details see "
                             "https://dochub.mongodb.org/core/legacy-opcode-removal"}


def test_query_on_a_collection_gets_a_legacy_err_reply():
    err, out = failure(op_query("test.things", {"a": 1}, request_id=77))
    flags = struct.unpack_from("<i", out, 16)[0]
    assert flags & 2  # QueryFailure
    op, response_to, doc = parse_reply(out)
    assert (op, response_to) == (1, 77)
    assert doc["code"] == 5739101 and doc["$err"].startswith("OP_QUERY is no longer supported")
