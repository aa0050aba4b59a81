"""OP_COMPRESSED (2012): noop, snappy, zlib and zstd.

Negotiation: a client lists compressors in its handshake; the server answers with the ones it
supports, in the client's order; later requests may arrive compressed with any of them, and each
reply uses the compressor of its request. Handshake and auth replies are never compressed.
Every failure here is fatal: mongod closes the connection on a message it cannot decompress.
"""
from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import ErrorCode
from ..limits import MAX_MESSAGE_SIZE
from .errors import ProtocolError, fatal
from .framing import HEADER_SIZE, OP_COMPRESSED, OP_MSG, OP_QUERY, OP_REPLY, encode_header

NOOP, SNAPPY, ZLIB, ZSTD = 0, 1, 2, 3
_IDS = {"noop": NOOP, "snappy": SNAPPY, "zlib": ZLIB, "zstd": ZSTD}
_PREFIX = struct.Struct("<iiB")  # originalOpcode, uncompressedSize, compressorId
#: commands whose replies must go out uncompressed (driver compression spec)
NEVER_COMPRESS = frozenset({"hello", "isMaster", "ismaster", "saslStart", "saslContinue", "getnonce",
                            "authenticate", "createUser", "updateUser", "copydbSaslStart",
                            "copydbgetnonce", "copydb"})
_INNER_OPCODES = frozenset({OP_MSG, OP_QUERY, OP_REPLY})


def _available() -> dict[int, bool]:
    found = {NOOP: True, ZLIB: True, SNAPPY: False, ZSTD: False}
    try:
        import snappy  # noqa: F401
        found[SNAPPY] = hasattr(snappy, "uncompress")
    except ImportError:
        pass
    try:
        import zstandard  # noqa: F401
        found[ZSTD] = True
    except ImportError:
        pass
    return found


_AVAILABLE = _available()
#: names a server may advertise, in our order of preference
SUPPORTED = tuple(name for name in ("snappy", "zstd", "zlib") if _AVAILABLE[_IDS[name]])


def negotiate(requested: Iterable[object], supported: Iterable[str] = SUPPORTED) -> list[str]:
    """The compressors of a handshake's `compression` list we support, in the client's order."""
    ours = set(supported)
    return [name for name in requested if isinstance(name, str) and name in ours]


@dataclass(frozen=True, slots=True)
class Decompressed:
    op_code: int
    body: bytes
    compressor_id: int


def decompress_message(body: bytes) -> Decompressed:
    """The original opcode and body of an OP_COMPRESSED message body."""
    if len(body) < _PREFIX.size:
        raise fatal("OP_COMPRESSED message is truncated")
    op_code, size, compressor_id = _PREFIX.unpack_from(body)
    if op_code not in _INNER_OPCODES:
        raise fatal(f"OP_COMPRESSED cannot carry opcode {op_code}")
    if size < 0 or size > MAX_MESSAGE_SIZE - HEADER_SIZE:
        raise fatal(f"Decompressed message would be too large: {size}")
    if not _AVAILABLE.get(compressor_id, False):
        raise fatal("Compression algorithm specified in message is not available", ErrorCode.InternalError)
    data = _decompress(compressor_id, body[_PREFIX.size:], size)
    if len(data) != size:
        raise fatal("Decompressing message returned less data than expected")
    return Decompressed(op_code, data, compressor_id)


def _decompress(compressor_id: int, data: bytes, size: int) -> bytes:
    try:
        if compressor_id == NOOP:
            return data
        if compressor_id == ZLIB:
            out = zlib.decompressobj()
            return out.decompress(data, size + 1)
        if compressor_id == SNAPPY:
            return _snappy_decompress(data, size)
        import zstandard
        if zstandard.frame_content_size(data) > size:  # -1 when the frame does not say
            raise fatal("Decompressing message returned more data than expected")
        return zstandard.ZstdDecompressor().decompress(data, max_output_size=size + 1)
    except ProtocolError:
        raise
    except Exception as exc:  # each library has its own error types
        raise fatal(f"Could not decompress message: {exc}") from None


def _snappy_decompress(data: bytes, size: int) -> bytes:
    import snappy
    # snappy starts with the uncompressed length as a varint: check it before allocating
    claimed, shift = 0, 0
    for byte in data[:5]:
        claimed |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    else:
        raise fatal("Invalid snappy length prefix")
    if claimed != size:
        raise fatal("Decompressing message returned less data than expected")
    return snappy.uncompress(data)


def compress_message(op_code: int, body: bytes, compressor_id: int, request_id: int,
                     response_to: int) -> bytes:
    """Wrap an encoded message body (without header) in OP_COMPRESSED."""
    if compressor_id == NOOP:
        packed = body
    elif compressor_id == ZLIB:
        packed = zlib.compress(body, 6)
    elif compressor_id == SNAPPY:
        import snappy
        packed = snappy.compress(body)
    else:
        import zstandard
        packed = zstandard.ZstdCompressor().compress(body)
    length = HEADER_SIZE + _PREFIX.size + len(packed)
    return b"".join((encode_header(length, request_id, response_to, OP_COMPRESSED),
                     _PREFIX.pack(op_code, len(body), compressor_id), packed))
