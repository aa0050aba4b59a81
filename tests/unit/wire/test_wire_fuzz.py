"""Fuzzing: any input either parses or raises ProtocolError, never anything else."""
from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st
from unit.wire.wire_messages import command, compressed, kind0, kind1, op_msg, op_query

from ginkgodb.wire import ProtocolError, WireConnection

SEEDS = [
    command({"ping": 1, "$db": "admin"}),
    command({"ping": 1, "$db": "admin"}, checksum=True),
    op_msg(kind0({"insert": "c", "$db": "t"}), kind1("documents", [{"_id": 1, "a": [1, {"b": 2}]}])),
    op_query("admin.$cmd", {"$query": {"ismaster": 1}}),
    compressed(command({"ping": 1, "$db": "admin"}), 2),
    compressed(command({"ping": 1, "$db": "admin"}), 1),
    compressed(command({"ping": 1, "$db": "admin"}), 3),
]


def drain(data: bytes) -> None:
    conn = WireConnection(max_message_size=1 << 20)
    conn.receive_data(data)
    for _ in range(64):
        try:
            request = conn.next_request()
        except ProtocolError as err:
            if err.fatal:
                return
            conn.encode_error(err)  # building the error reply must not fail either
            continue
        if request is None:
            return
        conn.encode_reply(request, {"ok": 1.0})


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=512))
def test_arbitrary_bytes_parse_or_raise_protocol_error(data):
    drain(data)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=512))
def test_arbitrary_body_behind_a_valid_header_parses_or_raises(body):
    for op_code in (2013, 2004, 2012):
        drain(struct.pack("<iiii", 16 + len(body), 1, 0, op_code) + body)


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(SEEDS), st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=6),
       st.integers(0, 10_000))
def test_mutated_valid_messages_parse_or_raise(seed, flips, cut):
    data = bytearray(seed)
    for pos, value in flips:
        data[pos % len(data)] = value
    drain(bytes(data[: max(4, len(data) - cut % 8)]))
