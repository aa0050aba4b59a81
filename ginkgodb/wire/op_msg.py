"""OP_MSG (opcode 2013): parse requests into one command document, encode replies.

Kind-1 document sequences are merged into the command as a list under their identifier
(`documents`, `updates`, `deletes`); each document stays a RawBSONDocument slice so an insert
never decodes what it only stores.
"""
from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import bson
from bson.raw_bson import RawBSONDocument
from crc32c import crc32c  # hardware-accelerated where the CPU has it

from ..errors import ErrorCode
from .documents import decode, document_end
from .errors import ProtocolError
from .framing import HEADER_SIZE, OP_MSG, encode_header

CHECKSUM_PRESENT = 1 << 0
MORE_TO_COME = 1 << 1
EXHAUST_ALLOWED = 1 << 16
_KNOWN_REQUIRED = CHECKSUM_PRESENT | MORE_TO_COME
_REQUIRED_MASK = 0xFFFF  # bits 0-15 must be understood; 16-31 may be ignored
_MAX_SEQUENCES = 2       # mongod's limit (8.0's bulkWrite uses two)
_UINT32 = struct.Struct("<I")


@dataclass(slots=True)
class OpMsg:
    flags: int
    command: dict[str, Any]

    @property
    def more_to_come(self) -> bool:
        return bool(self.flags & MORE_TO_COME)

    @property
    def exhaust_allowed(self) -> bool:
        return bool(self.flags & EXHAUST_ALLOWED)


def read_flags(body: bytes) -> int:
    if len(body) < 4:
        raise ProtocolError(ErrorCode.ProtocolError, "OP_MSG is too short to hold its flags", fatal=True)
    return _UINT32.unpack_from(body)[0]


def parse_op_msg(body: bytes, header_prefix: Callable[[], bytes] = lambda: b"") -> OpMsg:
    """Parse an OP_MSG body (the bytes after the header).

    `header_prefix` returns the 16-byte header, needed only to verify a checksum.
    """
    flags = read_flags(body)
    if flags & ~_KNOWN_REQUIRED & _REQUIRED_MASK:
        raise ProtocolError(ErrorCode.IllegalOpMsgFlag,
                            f"Message contains illegal flags value: Ob{flags:032b}", fatal=True)
    end = len(body)
    if flags & CHECKSUM_PRESENT:
        end -= 4
        _verify_checksum(header_prefix(), body, end)
    command, sequences = _read_sections(body, 4, end)
    for name, docs in sequences.items():
        if name in command:
            raise ProtocolError(ErrorCode.OpMsgSequenceDuplicatesBodyField,
                                f"Duplicate field between body and document sequence {name}")
        command[name] = docs
    if "$db" not in command:
        raise ProtocolError(ErrorCode.OpMsgMissingDb, "OP_MSG requests require a $db argument")
    return OpMsg(flags, command)


def _verify_checksum(header_prefix: bytes, body: bytes, end: int) -> None:
    if end < 4:
        raise ProtocolError(ErrorCode.ChecksumMismatch, "OP_MSG is too short for its checksum", fatal=True)
    expected = _UINT32.unpack_from(body, end)[0]
    actual = crc32c(body[:end], value=crc32c(header_prefix))
    if actual != expected:
        raise ProtocolError(ErrorCode.ChecksumMismatch, "OP_MSG checksum does not match contents",
                            fatal=True)


def _read_sections(body: bytes, pos: int, end: int) -> tuple[dict[str, Any], dict[str, list]]:
    command: dict[str, Any] | None = None
    sequences: dict[str, list] = {}
    while pos < end:
        kind = body[pos]
        pos += 1
        if kind == 0:
            if command is not None:
                raise ProtocolError(ErrorCode.OpMsgMultipleBodies,
                                    "Multiple body sections in message")
            doc_end = document_end(body, pos, end)
            command = decode(body[pos:doc_end])
            pos = doc_end
        elif kind == 1:
            if len(sequences) >= _MAX_SEQUENCES:
                raise ProtocolError(ErrorCode.TooManyDocumentSequences,
                                    "Too many document sequences in OP_MSG", fatal=True)
            pos = _read_sequence(body, pos, end, sequences)
        else:
            raise ProtocolError(ErrorCode.OpMsgUnknownSectionKind, f"Unknown section kind {kind}")
    if command is None:
        raise ProtocolError(ErrorCode.OpMsgMissingBody, "OP_MSG messages must have a body")
    return command, sequences


def _read_sequence(body: bytes, pos: int, end: int, sequences: dict[str, list]) -> int:
    """Read one kind-1 section at `pos` into `sequences`; returns the offset after it."""
    if end - pos < 4:
        raise ProtocolError(ErrorCode.ProtocolError, "Document sequence is truncated")
    size = int.from_bytes(body[pos:pos + 4], "little", signed=True)
    section_end = pos + size
    if size < 5 or section_end > end:
        raise ProtocolError(ErrorCode.ProtocolError, f"Invalid document sequence size {size}")
    nul = body.find(b"\x00", pos + 4, section_end)
    if nul < 0:
        raise ProtocolError(ErrorCode.ProtocolError, "Document sequence identifier is not terminated")
    try:
        name = body[pos + 4:nul].decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(ErrorCode.InvalidBSON, "Document sequence identifier is not UTF-8") from None
    if name in sequences:
        raise ProtocolError(ErrorCode.OpMsgDuplicateSequence,
                            f"Duplicate document sequence: {name}")
    docs = []
    doc_pos = nul + 1
    while doc_pos < section_end:
        doc_end = document_end(body, doc_pos, section_end)
        docs.append(RawBSONDocument(body[doc_pos:doc_end]))
        doc_pos = doc_end
    sequences[name] = docs
    return section_end


def encode_op_msg(reply: Mapping[str, Any], request_id: int, response_to: int, flags: int = 0) -> bytes:
    """A whole OP_MSG message with one kind-0 section holding `reply`."""
    doc = bson.encode(reply)
    length = HEADER_SIZE + 5 + len(doc)
    return b"".join((encode_header(length, request_id, response_to, OP_MSG),
                     _UINT32.pack(flags), b"\x00", doc))


def encode_op_msg_body(reply: Mapping[str, Any], flags: int = 0) -> bytes:
    """The OP_MSG bytes after the header (what OP_COMPRESSED compresses)."""
    return b"".join((_UINT32.pack(flags), b"\x00", bson.encode(reply)))
