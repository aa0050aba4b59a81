"""Change-stream resume tokens: `{_data: "<hex>"}`, token format version 1 (DO NOT CHANGE).

Bytes (docs/design/change-streams.md): 0x82, the cluster time (8 bytes big-endian, seconds then
increment), the token version, the type (0 high-water mark, 128 event), `txnOpIndex` (4 bytes),
`fromInvalidate`, then for events the collection UUID (a flag byte and 16 bytes) and the BSON
event identifier. Tokens compare as their hex strings do: by time, high-water marks before
events of the same time, then by `txnOpIndex`.
"""
from __future__ import annotations

import binascii
import struct
from dataclasses import dataclass, replace
from typing import Any, Optional

import bson
from bson.binary import Binary
from bson.timestamp import Timestamp

from ..errors import CommandError, ErrorCode

TOKEN_VERSION = 1
HIGH_WATER_MARK = 0
EVENT = 128
_HEAD = struct.Struct(">BIIBBIB")   # 0x82, seconds, increment, version, type, txnOpIndex, invalidate


@dataclass(frozen=True)
class ResumeToken:
    ts: Timestamp
    type: int = EVENT
    txn_op_index: int = 0
    from_invalidate: bool = False
    uuid: Optional[Binary] = None
    event_id: Optional[dict] = None
    version: int = TOKEN_VERSION

    @classmethod
    def high_water_mark(cls, ts: Timestamp) -> ResumeToken:
        return cls(ts, HIGH_WATER_MARK)

    @property
    def is_event(self) -> bool:
        return self.type == EVENT

    def invalidating(self) -> ResumeToken:
        """The token of the invalidate event that follows this event."""
        return replace(self, from_invalidate=True)

    def position(self) -> tuple:
        """What orders tokens (and positions a stream): time, type, index, invalidate."""
        return (self.ts.time, self.ts.inc, self.type, self.txn_op_index, self.from_invalidate)

    def encode(self) -> bytes:
        out = _HEAD.pack(0x82, self.ts.time, self.ts.inc, self.version, self.type, self.txn_op_index,
                         1 if self.from_invalidate else 0)
        if self.type == EVENT:
            out += b"\x01" + bytes(self.uuid) if self.uuid is not None else b"\x00"
            out += bson.encode(self.event_id or {})
        return out

    def to_document(self) -> dict:
        return {"_data": binascii.hexlify(self.encode()).decode().upper()}


def decode_token(value: Any, field: str = "resumeAfter") -> ResumeToken:
    """A token given by a client (`resumeAfter`, `startAfter`), with mongod's errors."""
    if not isinstance(value, dict):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field '$changeStream.{field}' is the wrong type "
                           f"'{_type_name(value)}', expected type 'object'")
    data = value.get("_data")
    if not isinstance(data, str) or len(value) != 1:
        raise CommandError(ErrorCode.FailedToParse,
                           f"Bad resume token: _data of missing or of wrong type. Expected string, got {value}")
    try:
        raw = binascii.unhexlify(data)
    except (binascii.Error, ValueError):
        raise CommandError(ErrorCode.FailedToParse, "resume token string was not a valid hex string") from None
    try:
        marker, secs, inc, version, kind, index, invalidate = _HEAD.unpack_from(raw, 0)
        if marker != 0x82 or kind not in (HIGH_WATER_MARK, EVENT):
            raise ValueError("not a ginkgodb token")
        pos = _HEAD.size
        uuid = event_id = None
        if kind == EVENT:
            if raw[pos] == 1:
                uuid = Binary(raw[pos + 1:pos + 17], 4)
                pos += 17
            else:
                pos += 1
            event_id = bson.decode(raw[pos:])
        elif pos != len(raw):
            raise ValueError("trailing bytes")
    except (ValueError, IndexError, struct.error, bson.errors.BSONError) as exc:
        raise CommandError(ErrorCode.FailedToParse, f"Failed to decode resume token: {exc}") from None
    return ResumeToken(Timestamp(secs, inc), kind, index, bool(invalidate), uuid, event_id, version)


def _type_name(value: Any) -> str:
    from ..bsonutil.types import type_name
    return type_name(value)
