"""Stored record values: plain BSON (record format 1) or a compressed envelope (format 2).

Spec: docs/design/storage-layout.md ("Record values"). A BSON document starts with its length as
a little-endian int32, at most 16 MiB and change, so its fourth byte is never 0xFF; an envelope's
is, which tells the two apart without a catalog lookup, so a collection may hold both (records
written before compression was chosen, or that did not shrink, stay plain). Every read of a
record goes through `document` once; the bytes it answers are the BSON the rest of the engine
handles (matchers, cursors, change events, the oplog never see an envelope).

DO NOT CHANGE the codec ids or the envelope layout; a new layout takes a new marker.
"""
from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Callable

import snappy
import zstandard

from ..bsonutil.types import type_name
from ..errors import CommandError, ErrorCode

NONE, SNAPPY, ZLIB, ZSTD = "none", "snappy", "zlib", "zstd"
CODECS = (NONE, SNAPPY, ZLIB, ZSTD)

#: persisted codec ids (byte 0 of an envelope): DO NOT CHANGE
_IDS = {SNAPPY: 1, ZLIB: 2, ZSTD: 3}
_MARK = 0xFF             # byte 3 of an envelope (of a BSON document: the length's top byte, never 0xFF)
_HEADER = struct.Struct("<B3sI")   # codec id, 0xFF 0xFF 0xFF, u32 uncompressed length
_FILL = b"\xff\xff\xff"
HEADER_SIZE = _HEADER.size
ZSTD_LEVEL = 3           # zstd's own default: the level that keeps writes cheap (bench/compression.py)
ZLIB_LEVEL = 6           # zlib's default, as WiredTiger's zlib compressor uses

_local = threading.local()   # zstandard contexts are not safe to share between threads


def _zstd_compressor() -> zstandard.ZstdCompressor:
    c = getattr(_local, "zc", None)
    if c is None:
        c = _local.zc = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    return c


def _zstd(raw: bytes) -> bytes:
    return _zstd_compressor().compress(raw)   # the frame records the content size


def _unzstd(value: bytes) -> bytes:
    try:
        d = _local.zd
    except AttributeError:
        d = _local.zd = zstandard.ZstdDecompressor()
    return d.decompress(value[HEADER_SIZE:])


_COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    SNAPPY: snappy.compress, ZLIB: lambda raw: zlib.compress(raw, ZLIB_LEVEL), ZSTD: _zstd}
#: codec id -> the whole stored value to its BSON
_EXPAND: dict[int, Callable[[bytes], bytes]] = {
    _IDS[SNAPPY]: lambda value: snappy.decompress(value[HEADER_SIZE:]),
    _IDS[ZLIB]: lambda value: zlib.decompress(value[HEADER_SIZE:]),
    _IDS[ZSTD]: _unzstd}


def encode(raw: bytes, codec: str) -> bytes:
    """The value to store for BSON `raw` in a collection using `codec`: an envelope when it is
    smaller, else `raw` itself (small documents often do not shrink)."""
    if codec == NONE:
        return raw
    body = _COMPRESS[codec](raw)
    if len(body) + HEADER_SIZE >= len(raw):
        return raw
    return b"".join((_HEADER.pack(_IDS[codec], _FILL, len(raw)), body))


def document(value: bytes) -> bytes:
    """The BSON document a stored record value holds (the one place records are decompressed)."""
    if value[3] != _MARK:
        return value
    return _EXPAND.get(value[0], _unknown)(value)


def _unknown(value: bytes) -> bytes:
    raise CommandError(ErrorCode.InternalError,
                       f"unknown record format (codec id {value[0]}): written by a newer ginkgodb?")


def document_size(value: bytes) -> int:
    """The uncompressed BSON size of a stored record value, without decompressing it."""
    if value[3] != _MARK:
        return len(value)
    return _HEADER.unpack_from(value)[2]


def is_compressed(value: bytes) -> bool:
    return value[3] == _MARK


def check_codec(name: object, field: str) -> str:
    """A codec name from a command or option, refused as mongod refuses a bad enumeration."""
    if not isinstance(name, str):
        raise CommandError(ErrorCode.TypeMismatch, f"BSON field '{field}' is the wrong type "
                                                   f"'{type_name(name)}', expected type 'string'")
    if name not in CODECS:
        raise CommandError(ErrorCode.BadValue,
                           f"Enumeration value '{name}' for field '{field}' is not a valid value.")
    return name
