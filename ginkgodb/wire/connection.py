"""The sans-IO connection: feed received bytes, take requests out, turn replies into bytes.

    conn = WireConnection()
    conn.receive_data(data)
    while (request := conn.next_request()) is not None:   # may raise ProtocolError
        out = conn.encode_reply(request, reply_document)   # None when no reply is due

A ProtocolError with `fatal` set means: close the connection. Otherwise the bad message was
consumed, the stream is still in sync, and `encode_error(exc)` gives the error reply (or None).
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import bson

from ..limits import MAX_MESSAGE_SIZE
from .compression import NEVER_COMPRESS, compress_message, decompress_message
from .errors import ProtocolError, fatal
from .framing import (
    HEADER,
    HEADER_SIZE,
    OP_COMPRESSED,
    OP_MSG,
    OP_QUERY,
    OP_REPLY,
    REMOVED_OPCODES,
    Frame,
    FrameBuffer,
    encode_header,
)
from .op_msg import MORE_TO_COME, encode_op_msg, encode_op_msg_body, parse_op_msg, read_flags
from .op_query import encode_op_reply, encode_op_reply_body, parse_op_query


@dataclass(slots=True)
class Request:
    """One command from the client, decoded."""

    request_id: int
    op_code: int                 # OP_MSG or OP_QUERY (the original opcode if it came compressed)
    command: dict[str, Any]      # includes $db; kind-1 sequences merged as lists of RawBSONDocument
    more_to_come: bool = False   # the client wants no reply (w:0 writes, Node's endSessions)
    exhaust_allowed: bool = False
    compressor_id: int | None = None
    wire_size: int = 0
    frame: Frame | None = None   # the message as received (what a server forwards unchanged)

    @property
    def name(self) -> str:
        return next(iter(self.command), "")


class WireConnection:
    """Protocol state of one client connection. No I/O: bytes in, requests out."""

    def __init__(self, max_message_size: int = MAX_MESSAGE_SIZE) -> None:
        self._frames = FrameBuffer(max_message_size)
        self._ids = itertools.count(1)
        self.last_reply_id = 0   # the requestID of the last message encoded (exhaust replies chain on it)

    def receive_data(self, data: bytes) -> None:
        self._frames.feed(data)

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as requests."""
        return self._frames.buffered

    @property
    def head_length(self) -> int:
        """Declared length of the first buffered message (0 until known): what the buffer must
        be allowed to hold for that message to complete."""
        return self._frames.head_length

    def next_request(self) -> Request | None:
        """The next whole request, or None until more bytes arrive. Raises ProtocolError."""
        frame = self._frames.next_frame()
        if frame is None:
            return None
        return parse_frame(frame)

    def encode_reply(self, request: Request, reply: Mapping[str, Any], *, more_to_come: bool = False) -> bytes | None:
        """The bytes answering `request`, or None when the request asked for no reply.

        `more_to_come` (OP_MSG requests that set exhaustAllowed only) marks the reply as one of
        a stream: the client reads the next reply without sending a request (`exhaust_request`)."""
        if request.more_to_come:
            return None
        compressor = request.compressor_id
        if compressor is not None and request.name in NEVER_COMPRESS:
            compressor = None
        flags = MORE_TO_COME if more_to_come and request.exhaust_allowed and request.op_code == OP_MSG else 0
        return self._encode(request.op_code, reply, request.request_id, compressor, flags=flags)

    def exhaust_request(self, request: Request) -> Request:
        """The request the server answers next in an exhaust stream: `request` again, as if the
        client had sent it in answer to the last reply (whose requestID becomes its own, so the
        next reply's responseTo names the previous reply, as mongod's do)."""
        return replace(request, request_id=self.last_reply_id)

    def encode_error(self, error: ProtocolError) -> bytes | None:
        """The error reply for a non-fatal ProtocolError (None if fatal or unacknowledged)."""
        if error.fatal or error.more_to_come:
            return None
        op_code = OP_QUERY if error.legacy else OP_MSG
        return self._encode(op_code, error.reply_document(), error.request_id, error.compressor_id,
                            query_failure=error.legacy_err)

    def _encode(self, op_code: int, reply: Mapping[str, Any], response_to: int,
                compressor: int | None, query_failure: bool = False, flags: int = 0) -> bytes:
        request_id = next(self._ids) & 0x7FFFFFFF
        self.last_reply_id = request_id
        if op_code == OP_QUERY:
            if compressor is None:
                return encode_op_reply(reply, request_id, response_to, query_failure=query_failure)
            return compress_message(OP_REPLY, encode_op_reply_body(reply), compressor, request_id,
                                    response_to)
        if compressor is None:
            return encode_op_msg(reply, request_id, response_to, flags)
        return compress_message(OP_MSG, encode_op_msg_body(reply, flags), compressor, request_id, response_to)


def parse_frame(frame: Frame) -> Request:
    """Decode one framed message into a Request (decompressing OP_COMPRESSED first)."""
    header = frame.header
    op_code, body, compressor = header.op_code, frame.body, None
    if op_code == OP_COMPRESSED:
        inner = decompress_message(body)
        op_code, body, compressor = inner.op_code, inner.body, inner.compressor_id
    try:
        request = _parse(op_code, body, header.request_id, header.response_to, compressor)
        request.frame = frame
        return request
    except ProtocolError as err:
        err.request_id = header.request_id
        err.legacy = op_code == OP_QUERY
        err.compressor_id = compressor
        if op_code == OP_MSG and len(body) >= 4:
            err.more_to_come = bool(read_flags(body) & MORE_TO_COME)
        raise


def _parse(op_code: int, body: bytes, request_id: int, response_to: int,
           compressor: int | None) -> Request:
    size = HEADER_SIZE + len(body)
    if op_code == OP_MSG:
        msg = parse_op_msg(body, lambda: encode_header(size, request_id, response_to, OP_MSG))
        return Request(request_id, OP_MSG, msg.command, msg.more_to_come, msg.exhaust_allowed,
                       compressor, size)
    if op_code == OP_QUERY:
        query = parse_op_query(body)
        return Request(request_id, OP_QUERY, query.command, False, False, compressor, size)
    if op_code in REMOVED_OPCODES:
        raise fatal(f"Unsupported legacy opcode {op_code}: the client driver may require an upgrade")
    raise fatal(f"Unknown opcode {op_code}")


def raw_message(request: Request) -> bytes:
    """The bytes of `request` exactly as they arrived (header included), to forward unchanged."""
    frame = request.frame
    if frame is None:
        raise ValueError("the request was not received from the wire")
    return encode_header(*frame.header) + frame.body


def reply_more_to_come(message: bytes) -> bool:
    """Whether a whole reply message says another reply follows without a request (exhaust)."""
    op_code = int.from_bytes(message[12:16], "little", signed=True)
    body = message[HEADER_SIZE:]
    if op_code == OP_COMPRESSED:
        inner = decompress_message(body)
        op_code, body = inner.op_code, inner.body
    return op_code == OP_MSG and len(body) >= 4 and bool(read_flags(body) & MORE_TO_COME)


def decode_reply(message: bytes) -> dict[str, Any]:
    """The document of a whole OP_MSG reply message (compressed or not): a server's replies
    hold one kind-0 section."""
    op_code = HEADER.unpack_from(message)[3]
    body = message[HEADER_SIZE:]
    if op_code == OP_COMPRESSED:
        inner = decompress_message(body)
        op_code, body = inner.op_code, inner.body
    if op_code != OP_MSG or len(body) < 5 or body[4] != 0:
        raise fatal("not an OP_MSG reply with a body section")
    return bson.decode(body[5:])
