"""Message framing: the 16-byte header and splitting a byte stream into whole messages."""
from __future__ import annotations

import struct
from typing import NamedTuple

from ..limits import MAX_MESSAGE_SIZE
from .errors import fatal

OP_REPLY = 1
OP_UPDATE = 2001
OP_INSERT = 2002
OP_QUERY = 2004
OP_GET_MORE = 2005
OP_DELETE = 2006
OP_KILL_CURSORS = 2007
OP_COMPRESSED = 2012
OP_MSG = 2013

#: opcodes removed in MongoDB 5.1/6.0: mongod closes the connection on them
REMOVED_OPCODES = frozenset({OP_UPDATE, OP_INSERT, OP_GET_MORE, OP_DELETE, OP_KILL_CURSORS})

HEADER = struct.Struct("<iiii")
HEADER_SIZE = HEADER.size


class Header(NamedTuple):
    """A message header (a NamedTuple: built once per message, so it must be cheap)."""

    length: int        # whole message, header included
    request_id: int
    response_to: int
    op_code: int


class Frame(NamedTuple):
    """One whole message off the wire: its header and the bytes after the header."""

    header: Header
    body: bytes


def encode_header(length: int, request_id: int, response_to: int, op_code: int) -> bytes:
    return HEADER.pack(length, request_id, response_to, op_code)


class FrameBuffer:
    """Accumulates received bytes and hands out whole messages.

    Invalid lengths are fatal (mongod closes the connection: the stream cannot be resynced).
    """

    def __init__(self, max_message_size: int = MAX_MESSAGE_SIZE) -> None:
        self._buf = bytearray()
        self._max = max_message_size

    def feed(self, data: bytes) -> None:
        self._buf += data

    @property
    def buffered(self) -> int:
        return len(self._buf)

    @property
    def head_length(self) -> int:
        """The declared length of the first buffered message (0 until its length field has
        arrived; a length outside the limits is reported by `next_frame`)."""
        buf = self._buf
        if len(buf) < 4:
            return 0
        return max(int.from_bytes(buf[:4], "little", signed=True), 0)

    def next_frame(self) -> Frame | None:
        """The next whole message, or None until more bytes arrive."""
        buf = self._buf
        if len(buf) < 4:
            return None
        length = int.from_bytes(buf[:4], "little", signed=True)
        if length < HEADER_SIZE or length > self._max:
            raise fatal(f"recv(): message msgLen {length} is invalid. Min {HEADER_SIZE} Max: {self._max}")
        if len(buf) < length:
            return None
        header = Header._make(HEADER.unpack_from(buf))
        if length == len(buf):  # the common case: exactly one message buffered
            body = bytes(buf[HEADER_SIZE:])
            buf.clear()
        else:
            body = bytes(buf[HEADER_SIZE:length])
            del buf[:length]
        return Frame(header, body)
