"""Legacy OP_QUERY (2004), kept only for the handshake, and its OP_REPLY (1).

Servers since 6.0 accept OP_QUERY only for `hello`/`isMaster` (and a few deprecated commands
old drivers still send first); everything else is 352 UnsupportedOpQueryCommand, and a query on
a collection (not `db.$cmd`) gets a legacy `$err` reply.
"""
from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import bson

from ..errors import ErrorCode
from .documents import decode, document_end
from .errors import ProtocolError
from .framing import HEADER_SIZE, OP_REPLY, encode_header

#: what mongod 7.0 still runs over OP_QUERY (check_allowed_op_query_cmd.cpp); the sasl and
#: authenticate entries are omitted because ginkgodb has no authentication
ALLOWED_COMMANDS = frozenset({"hello", "isMaster", "ismaster", "buildinfo", "buildInfo"})

AWAIT_CAPABLE = 8   # OP_REPLY responseFlags bit servers always set
QUERY_FAILURE = 2
_REPLY_PREFIX = struct.Struct("<iqii")  # responseFlags, cursorID, startingFrom, numberReturned
_LEGACY_REMOVED = ("OP_QUERY is no longer supported. The client driver may require an upgrade. "
                   "For more details see https://dochub.mongodb.org/core/legacy-opcode-removal")


@dataclass(slots=True)
class OpQuery:
    flags: int
    namespace: str
    command: dict[str, Any]


def parse_op_query(body: bytes) -> OpQuery:
    """Parse an OP_QUERY body into a command document with `$db` set from the namespace."""
    if len(body) < 4:
        raise ProtocolError(ErrorCode.ProtocolError, "OP_QUERY is truncated", fatal=True)
    flags = int.from_bytes(body[:4], "little", signed=True)
    nul = body.find(b"\x00", 4)
    if nul < 0 or len(body) < nul + 9:
        raise ProtocolError(ErrorCode.ProtocolError, "OP_QUERY is truncated", fatal=True)
    try:
        namespace = body[4:nul].decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(ErrorCode.InvalidNamespace, "Invalid namespace (not UTF-8)") from None
    pos = nul + 9  # skip numberToSkip, numberToReturn
    query = decode(body[pos:document_end(body, pos, len(body))])
    db, _, coll = namespace.partition(".")
    if coll != "$cmd":
        err = ProtocolError(ErrorCode.OpQueryCommandRemoved, _LEGACY_REMOVED)
        err.legacy_err = True
        raise err
    command = _unwrap(query)
    name = next(iter(command), "")
    if name not in ALLOWED_COMMANDS:
        raise ProtocolError(ErrorCode.UnsupportedOpQueryCommand,
                            f"Unsupported OP_QUERY command: {name}. The client driver may require an "
                            "upgrade. For more details see "
                            "https://dochub.mongodb.org/core/legacy-opcode-removal")
    command["$db"] = db
    return OpQuery(flags, namespace, command)


def _unwrap(query: dict[str, Any]) -> dict[str, Any]:
    """Legacy drivers wrap the command as {$query: cmd, $readPreference: ...}."""
    first = next(iter(query), None)
    if first in ("$query", "query") and isinstance(query[first], dict):
        return dict(query[first])
    return query


def encode_op_reply(reply: Mapping[str, Any], request_id: int, response_to: int, *,
                    query_failure: bool = False) -> bytes:
    """A whole OP_REPLY carrying one document."""
    doc = bson.encode(reply)
    flags = AWAIT_CAPABLE | (QUERY_FAILURE if query_failure else 0)
    length = HEADER_SIZE + _REPLY_PREFIX.size + len(doc)
    return b"".join((encode_header(length, request_id, response_to, OP_REPLY),
                     _REPLY_PREFIX.pack(flags, 0, 0, 1), doc))


def encode_op_reply_body(reply: Mapping[str, Any]) -> bytes:
    """OP_REPLY bytes after the header (for OP_COMPRESSED)."""
    return _REPLY_PREFIX.pack(AWAIT_CAPABLE, 0, 0, 1) + bson.encode(reply)
