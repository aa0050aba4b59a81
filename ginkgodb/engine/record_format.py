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

import hashlib
import struct
import threading
import zlib
from collections.abc import Callable
from typing import Optional

import snappy
import zstandard

from ..bsonutil.types import type_name
from ..errors import CommandError, ErrorCode

NONE, SNAPPY, ZLIB, ZSTD = "none", "snappy", "zlib", "zstd"
CODECS = (NONE, SNAPPY, ZLIB, ZSTD)

#: persisted codec ids (byte 0 of an envelope): DO NOT CHANGE
_IDS = {SNAPPY: 1, ZLIB: 2, ZSTD: 3}
_ZSTD_DICT_ID = 4        # zstd with the collection's trained dictionary (the id follows the header)
_MARK = 0xFF             # byte 3 of an envelope (of a BSON document: the length's top byte, never 0xFF)
_HEADER = struct.Struct("<B3sI")   # codec id, 0xFF 0xFF 0xFF, u32 uncompressed length
_FILL = b"\xff\xff\xff"
HEADER_SIZE = _HEADER.size
_DICT_ID = struct.Struct("<Q")     # after the header of a codec-4 envelope: the dictionary's id
DICT_HEADER_SIZE = HEADER_SIZE + _DICT_ID.size
#: the size of a trained dictionary (zstd's own default for its trainer is 110 KB; 16 KB measured
#: as good for 0.5 KB documents, bench/results/compression.md)
DICTIONARY_BYTES = 16 * 1024
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


# -- zstd dictionaries: ids are hashes of their bytes, so one registry serves every data directory
_DICTIONARIES: dict[int, zstandard.ZstdCompressionDict] = {}


def dictionary_id(data: bytes) -> int:
    """The id a dictionary is stored and referenced under (never 0: 0 means "none")."""
    # 63 bits: the catalog entry keeps it as a BSON int64
    return (int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") >> 1) or 1


def register_dictionary(data: bytes) -> int:
    """Make a dictionary usable by `encode` and `document` in this process; its id."""
    did = dictionary_id(data)
    if did not in _DICTIONARIES:
        _DICTIONARIES[did] = zstandard.ZstdCompressionDict(data)
    return did


def has_dictionary(did: int) -> bool:
    return did in _DICTIONARIES


def train_dictionary(samples: list[bytes]) -> Optional[bytes]:
    """A dictionary trained on sample documents, or None when zstd finds too little to learn."""
    buffers: list[bytes | bytearray | memoryview] = list(samples)
    try:
        return zstandard.train_dictionary(DICTIONARY_BYTES, buffers, level=ZSTD_LEVEL).as_bytes()
    except zstandard.ZstdError:
        return None


def _with_dictionary(did: int, kind: str, make: Callable[[zstandard.ZstdCompressionDict], object]) -> object:
    cache = getattr(_local, kind, None)
    if cache is None:
        cache = {}
        setattr(_local, kind, cache)
    ctx = cache.get(did)
    if ctx is None:
        zdict = _DICTIONARIES.get(did)
        if zdict is None:
            raise CommandError(ErrorCode.InternalError,
                               f"zstd dictionary {did:016x} is not loaded (a damaged catalog?)")
        ctx = cache[did] = make(zdict)
    return ctx


def _zstd_dict(raw: bytes, did: int) -> bytes:
    compressor = _with_dictionary(did, "zdc", lambda d: zstandard.ZstdCompressor(
        level=ZSTD_LEVEL, dict_data=d, write_dict_id=False))
    return compressor.compress(raw)  # type: ignore[attr-defined]


_unpack_dict_id = _DICT_ID.unpack_from


def _unzstd_dict(value: bytes) -> bytes:
    did = _unpack_dict_id(value, HEADER_SIZE)[0]
    try:    # every read of such a record comes here: the cached decompressor first
        decompressor = _local.zdd[did]
    except (AttributeError, KeyError):
        decompressor = _with_dictionary(did, "zdd", lambda d: zstandard.ZstdDecompressor(dict_data=d))
    return decompressor.decompress(value[DICT_HEADER_SIZE:])


_COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    SNAPPY: snappy.compress, ZLIB: lambda raw: zlib.compress(raw, ZLIB_LEVEL), ZSTD: _zstd}
#: codec id -> the whole stored value to its BSON
_EXPAND: dict[int, Callable[[bytes], bytes]] = {
    _IDS[SNAPPY]: lambda value: snappy.decompress(value[HEADER_SIZE:]),
    _IDS[ZLIB]: lambda value: zlib.decompress(value[HEADER_SIZE:]),
    _IDS[ZSTD]: _unzstd,
    _ZSTD_DICT_ID: _unzstd_dict}


def encode(raw: bytes, codec: str, dictionary: int = 0) -> bytes:
    """The value to store for BSON `raw` in a collection using `codec` (and, for zstd, the
    collection's trained `dictionary`, 0 for none): an envelope when it is smaller, else `raw`
    itself (small documents often do not shrink)."""
    if codec == NONE:
        return raw
    if dictionary and codec == ZSTD:
        body = _zstd_dict(raw, dictionary)
        if len(body) + DICT_HEADER_SIZE >= len(raw):
            return raw
        return b"".join((_HEADER.pack(_ZSTD_DICT_ID, _FILL, len(raw)), _DICT_ID.pack(dictionary), body))
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
