"""Splitting a byte stream into messages; limits that close the connection."""
from __future__ import annotations

import struct

import pytest
from unit.wire.wire_messages import command, header

from ginkgodb.wire import ProtocolError, WireConnection

PING = {"ping": 1, "$db": "admin"}


def test_message_split_across_reads_is_reassembled():
    data = command(PING, request_id=3)
    conn = WireConnection()
    for i in range(len(data)):
        assert conn.next_request() is None
        conn.receive_data(data[i:i + 1])
    assert conn.next_request().request_id == 3
    assert conn.buffered == 0


def test_several_messages_in_one_read_come_out_in_order():
    conn = WireConnection()
    conn.receive_data(b"".join(command(PING, request_id=i) for i in (1, 2, 3)))
    assert [conn.next_request().request_id for _ in range(3)] == [1, 2, 3]
    assert conn.next_request() is None


@pytest.mark.parametrize("length", [0, 15, -1, 48_000_001])
def test_invalid_message_length_closes_the_connection(length):
    conn = WireConnection()
    conn.receive_data(struct.pack("<i", length) + b"\x00" * 12)
    with pytest.raises(ProtocolError) as info:
        conn.next_request()
    assert info.value.fatal


def test_message_of_exactly_48_million_bytes_is_read():
    conn = WireConnection()
    conn.receive_data(struct.pack("<i", 48_000_000))
    assert conn.next_request() is None  # waits for the rest instead of failing


@pytest.mark.parametrize("op_code", [2001, 2002, 2005, 2006, 2007, 1, 4242])
def test_removed_and_unknown_opcodes_close_the_connection(op_code):
    conn = WireConnection()
    conn.receive_data(header(20, 1, op_code) + b"\x00" * 4)
    with pytest.raises(ProtocolError) as info:
        conn.next_request()
    assert info.value.fatal
