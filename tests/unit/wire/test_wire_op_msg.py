"""OP_MSG parsing and reply encoding."""
from __future__ import annotations

import struct

import bson
import pytest
from bson.raw_bson import RawBSONDocument
from unit.wire.wire_messages import command, kind0, kind1, op_msg, parse_reply

from ginkgodb.limits import MAX_INTERNAL_BSON_SIZE
from ginkgodb.wire import ProtocolError, WireConnection


def one_request(data: bytes):
    conn = WireConnection()
    conn.receive_data(data)
    return conn, conn.next_request()


def error_of(data: bytes) -> ProtocolError:
    conn = WireConnection()
    conn.receive_data(data)
    with pytest.raises(ProtocolError) as info:
        conn.next_request()
    return info.value


def test_kind0_body_becomes_the_command():
    _, req = one_request(command({"ping": 1, "$db": "admin"}, request_id=42))
    assert req.command == {"ping": 1, "$db": "admin"}
    assert req.request_id == 42 and req.name == "ping" and not req.more_to_come


def test_kind1_sequence_is_merged_as_raw_documents():
    docs = [{"_id": 1, "a": "x"}, {"_id": 2}]
    _, req = one_request(op_msg(kind0({"insert": "c", "$db": "test"}), kind1("documents", docs)))
    assert all(isinstance(d, RawBSONDocument) for d in req.command["documents"])
    assert [dict(d) for d in req.command["documents"]] == docs
    assert req.command["insert"] == "c"


def test_sequence_before_body_is_accepted():
    _, req = one_request(op_msg(kind1("deletes", [{"q": {}, "limit": 0}]), kind0({"delete": "c", "$db": "t"})))
    assert len(req.command["deletes"]) == 1


def test_two_sequences_are_merged():
    _, req = one_request(op_msg(kind0({"bulkWrite": 1, "$db": "admin"}), kind1("ops", [{"i": 1}]),
                                kind1("nsInfo", [{"ns": "t.c"}])))
    assert set(req.command) >= {"ops", "nsInfo"}


def test_three_sequences_close_the_connection():
    err = error_of(op_msg(kind0({"x": 1, "$db": "a"}), kind1("a", []), kind1("b", []), kind1("c", [])))
    assert err.code == 233 and err.fatal


def test_duplicate_sequence_is_40431():
    err = error_of(op_msg(kind0({"x": 1, "$db": "a"}), kind1("a", []), kind1("a", [])))
    assert (err.code, err.errmsg, err.fatal) == (40431, "Duplicate document sequence: a", False)


def test_field_in_body_and_sequence_is_40433():
    err = error_of(op_msg(kind0({"insert": "c", "documents": [], "$db": "t"}), kind1("documents", [{}])))
    assert err.code == 40433
    assert err.errmsg == "Duplicate field between body and document sequence documents"


def test_two_bodies_are_40430():
    assert error_of(op_msg(kind0({"a": 1, "$db": "t"}), kind0({"b": 1}))).code == 40430


def test_missing_body_is_40587():
    assert error_of(op_msg(kind1("documents", [{}]))).errmsg == "OP_MSG messages must have a body"


def test_unknown_section_kind_is_40432():
    assert error_of(op_msg(kind0({"a": 1, "$db": "t"}), b"\x05")).code == 40432


def test_missing_db_is_40571():
    assert error_of(command({"ping": 1})).code == 40571


def test_unknown_required_flag_bit_closes_the_connection():
    err = error_of(command({"ping": 1, "$db": "admin"}, flags=1 << 4))
    assert err.code == 223 and err.fatal
    assert err.errmsg == "Message contains illegal flags value: Ob" + format(1 << 4, "032b")


def test_exhaust_allowed_and_other_optional_bits_are_ignored():
    _, req = one_request(command({"ping": 1, "$db": "admin"}, flags=(1 << 16) | (1 << 20)))
    assert req.exhaust_allowed and req.command["ping"] == 1


def test_more_to_come_gets_no_reply():
    conn, req = one_request(command({"endSessions": [], "$db": "admin"}, flags=2))
    assert req.more_to_come
    assert conn.encode_reply(req, {"ok": 1.0}) is None


def test_error_for_more_to_come_request_gets_no_reply():
    err = error_of(command({"ping": 1}, flags=2))
    assert err.more_to_come and WireConnection().encode_error(err) is None


def test_valid_checksum_is_verified_and_stripped():
    _, req = one_request(command({"ping": 1, "$db": "admin"}, checksum=True))
    assert req.command == {"ping": 1, "$db": "admin"}


def test_wrong_checksum_closes_the_connection():
    data = bytearray(command({"ping": 1, "$db": "admin"}, checksum=True))
    data[-1] ^= 0xFF
    err = error_of(bytes(data))
    assert err.code == 288 and err.fatal


def test_oversized_body_is_10334_with_mongods_message():
    big = {"insert": "polygons", "$db": "t", "pad": "x" * MAX_INTERNAL_BSON_SIZE}
    err = error_of(command(big))
    assert err.code == 10334 and not err.fatal
    size = len(bson.encode(big))
    assert err.errmsg == (f"BSONObj size: {size} (0x{size:X}) is invalid. Size must be between 0 and "
                          '16793600(16MB) First element: insert: "polygons"')


def test_oversized_sequence_document_is_10334():
    doc = {"_id": 1, "pad": "x" * MAX_INTERNAL_BSON_SIZE}
    err = error_of(op_msg(kind0({"insert": "c", "$db": "t"}), kind1("documents", [doc])))
    assert err.code == 10334


def test_max_size_user_document_fits_in_a_sequence():
    pad = 16 * 1024 * 1024 - len(bson.encode({"_id": 1, "pad": ""}))
    doc = {"_id": 1, "pad": "x" * pad}
    assert len(bson.encode(doc)) == 16 * 1024 * 1024
    _, req = one_request(op_msg(kind0({"insert": "c", "$db": "t"}), kind1("documents", [doc])))
    assert len(req.command["documents"][0].raw) == 16 * 1024 * 1024


def test_invalid_bson_in_body_is_an_error_reply():
    raw = bytearray(command({"ping": "abc", "$db": "admin"}))
    raw[25] = 0x7F  # the element type byte of "ping": no such BSON type
    err = error_of(bytes(raw))
    assert err.code == 22 and not err.fatal
    _, _, reply = parse_reply(WireConnection().encode_error(err))
    assert reply["ok"] == 0 and reply["codeName"] == "InvalidBSON"


def test_error_reply_answers_the_failed_request():
    err = error_of(command({"ping": 1}, request_id=1234))
    op, response_to, reply = parse_reply(WireConnection().encode_error(err))
    assert (op, response_to) == (2013, 1234)
    assert reply == {"ok": 0.0, "errmsg": "OP_MSG requests require a $db argument", "code": 40571,
                     "codeName": "Location40571"}


def test_reply_is_one_kind0_section_answering_the_request():
    conn, req = one_request(command({"ping": 1, "$db": "admin"}, request_id=99))
    raw_doc = RawBSONDocument(bson.encode({"a": 1}))
    out = conn.encode_reply(req, {"cursor": {"firstBatch": [raw_doc]}, "ok": 1.0})
    op, response_to, reply = parse_reply(out)
    assert (op, response_to) == (2013, 99)
    assert struct.unpack_from("<I", out, 16)[0] == 0
    assert reply == {"cursor": {"firstBatch": [{"a": 1}]}, "ok": 1.0}


def test_reply_request_ids_increase():
    conn, req = one_request(command({"ping": 1, "$db": "admin"}))
    first = struct.unpack_from("<i", conn.encode_reply(req, {"ok": 1.0}), 4)[0]
    second = struct.unpack_from("<i", conn.encode_reply(req, {"ok": 1.0}), 4)[0]
    assert second == first + 1
