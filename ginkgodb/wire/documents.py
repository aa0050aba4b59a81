"""Finding BSON documents inside a message body: boundaries and sizes, without decoding.

Decoding is pymongo's C codec (`bson.decode`); this module only checks what must hold before a
slice can be handed to it or kept as a RawBSONDocument: a sane length and a trailing NUL.
"""
from __future__ import annotations

from typing import Any

import bson

from ..errors import ErrorCode
from ..limits import MAX_INTERNAL_BSON_SIZE
from .errors import ProtocolError

_MIN_DOC = 5  # int32 length + terminating NUL


def document_end(data: bytes, offset: int, limit: int) -> int:
    """End offset of the BSON document starting at `offset`, which must end by `limit`."""
    if limit - offset < 4:
        raise ProtocolError(ErrorCode.InvalidBSON, "Not enough bytes for a BSON document")
    size = int.from_bytes(data[offset:offset + 4], "little", signed=True)
    if size > MAX_INTERNAL_BSON_SIZE or size < 0:
        raise too_large(size, data, offset, limit)
    if size < _MIN_DOC or offset + size > limit:
        raise ProtocolError(ErrorCode.InvalidBSON, f"Invalid BSON document length {size}")
    if data[offset + size - 1] != 0:
        raise ProtocolError(ErrorCode.InvalidBSON, "BSON document is not NUL-terminated")
    return offset + size


def too_large(size: int, data: bytes = b"", offset: int = 0, limit: int = 0) -> ProtocolError:
    """mongod's 10334 for an object over the internal limit, naming its first element."""
    msg = (f"BSONObj size: {size} (0x{size & 0xFFFFFFFF:X}) is invalid. Size must be between 0 "
           f"and {MAX_INTERNAL_BSON_SIZE}({MAX_INTERNAL_BSON_SIZE // (1024 * 1024)}MB)")
    first = _first_element(data, offset, limit)
    if first:
        msg += f" First element: {first}"
    return ProtocolError(ErrorCode.BSONObjectTooLarge, msg)


def _first_element(data: bytes, offset: int, limit: int) -> str:
    """`name: value` of a document's first element for error messages; '' if unreadable."""
    start = offset + 4
    nul = data.find(b"\x00", start + 1, min(limit, start + 1024))
    if start >= limit or nul < 0:
        return ""
    kind = data[start]
    name = data[start + 1:nul].decode("utf-8", "replace")
    value = data[nul + 1:min(limit, nul + 256)]
    if kind == 0x02 and len(value) >= 4:  # string: the command name in the common case
        n = int.from_bytes(value[:4], "little", signed=True)
        text = value[4:4 + max(n - 1, 0)].decode("utf-8", "replace")
        return f'{name}: "{text}"'
    if kind == 0x10 and len(value) >= 4:
        return f"{name}: {int.from_bytes(value[:4], 'little', signed=True)}"
    return f"{name}: ..."


def decode(data: bytes) -> dict[str, Any]:
    """Decode one whole document (already bounds-checked); InvalidBSON becomes ProtocolError."""
    try:
        return bson.decode(data)
    except Exception as exc:  # pymongo raises InvalidBSON, and sometimes Value/Overflow errors
        raise ProtocolError(ErrorCode.InvalidBSON, f"invalid BSON: {exc}") from None
