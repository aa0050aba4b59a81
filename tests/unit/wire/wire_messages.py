"""Client-side message builders for the wire tests (what drivers put on the socket)."""
from __future__ import annotations

import struct
import zlib

import bson
from crc32c import crc32c

OP_REPLY, OP_QUERY, OP_COMPRESSED, OP_MSG = 1, 2004, 2012, 2013


def header(length: int, request_id: int, op_code: int, response_to: int = 0) -> bytes:
    return struct.pack("<iiii", length, request_id, response_to, op_code)


def kind0(doc: dict) -> bytes:
    return b"\x00" + bson.encode(doc)


def kind1(identifier: str, docs: list[dict]) -> bytes:
    payload = identifier.encode() + b"\x00" + b"".join(bson.encode(d) for d in docs)
    return b"\x01" + struct.pack("<i", 4 + len(payload)) + payload


def op_msg(*sections: bytes, flags: int = 0, request_id: int = 7, checksum: bool = False) -> bytes:
    body = struct.pack("<I", flags | (1 if checksum else 0)) + b"".join(sections)
    length = 16 + len(body) + (4 if checksum else 0)
    msg = header(length, request_id, OP_MSG) + body
    if checksum:
        msg += struct.pack("<I", crc32c(msg))
    return msg


def command(doc: dict, **kw) -> bytes:
    return op_msg(kind0(doc), **kw)


def op_query(namespace: str, query: dict, request_id: int = 9) -> bytes:
    body = (struct.pack("<i", 0) + namespace.encode() + b"\x00" + struct.pack("<ii", 0, -1)
            + bson.encode(query))
    return header(16 + len(body), request_id, OP_QUERY) + body


def compressed(message: bytes, compressor_id: int, packed: bytes | None = None) -> bytes:
    """Wrap a whole message (header included) in OP_COMPRESSED."""
    request_id, _, op_code = struct.unpack_from("<iii", message, 4)
    body = message[16:]
    if packed is None:
        packed = {0: lambda b: b, 2: zlib.compress}.get(compressor_id, _lib_compress(compressor_id))(body)
    payload = struct.pack("<iiB", op_code, len(body), compressor_id) + packed
    return header(16 + len(payload), request_id, OP_COMPRESSED) + payload


def _lib_compress(compressor_id: int):
    if compressor_id == 1:
        import snappy
        return snappy.compress
    import zstandard
    return zstandard.ZstdCompressor().compress


def parse_reply(data: bytes) -> tuple[int, int, dict]:
    """(opcode, responseTo, document) of an uncompressed OP_MSG or OP_REPLY."""
    length, _, response_to, op_code = struct.unpack_from("<iiii", data)
    assert length == len(data)
    if op_code == OP_MSG:
        assert data[20] == 0
        return op_code, response_to, bson.decode(data[21:])
    assert op_code == OP_REPLY
    return op_code, response_to, bson.decode(data[36:])


def decompress_reply(data: bytes) -> tuple[int, bytes]:
    """(compressorId, the original message re-framed) of an OP_COMPRESSED reply."""
    length, request_id, response_to, op_code = struct.unpack_from("<iiii", data)
    assert op_code == OP_COMPRESSED
    orig, size, cid = struct.unpack_from("<iiB", data, 16)
    packed = data[25:]
    if cid == 2:
        body = zlib.decompress(packed)
    elif cid == 1:
        import snappy
        body = snappy.uncompress(packed)
    elif cid == 3:
        import zstandard
        body = zstandard.ZstdDecompressor().decompress(packed, max_output_size=size)
    else:
        body = packed
    assert len(body) == size
    return cid, header(16 + size, request_id, orig, response_to) + body
