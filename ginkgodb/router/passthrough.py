"""Reads one shard answers whole, forwarded as bytes (docs/design/sharding.md, "The targeted read").

A `find` on an unsharded collection, or one whose filter pins every shard key field by a plain
equality (`{_id: 5}` on `{_id: "hashed"}`), goes to one shard and its answer is that shard's
reply. The general path (dispatch.py) decodes the request, parses it with find's declaration,
targets it, encodes a new request for the shard and encodes the reply again; here the router
decodes the request once (C), cuts the router's session fields (re-encoding the kept ones in C
when there are any), splices the cached shard version in as bytes, and hands the shard's reply
message back with only its header's ids rewritten.

Whatever this path does not recognise returns None and takes the general path, which then
behaves as it always did: another command, a field outside FORWARDED (a transaction's fields,
a collation, tailable cursors...), a compressed or checksummed message, a filter that does not
pin one shard key value, a shard's answer that is not ok (its errors, StaleConfig and the
refresh, a primary that stepped down), a socket error. The general path sends the read again
then: a read may reach a shard twice, nothing is written.
"""
from __future__ import annotations

import logging
import struct
import weakref
from collections.abc import Mapping
from typing import Any, Union

import bson
from bson.int64 import Int64
from bson.raw_bson import RawBSONDocument

from ..wire.framing import HEADER, OP_MSG, Frame
from .chunks import ChunkMap
from .crud import adopt_one_shard_cursor
from .shards import RAW, version_field
from .state import Router
from .targeting import point_shard

log = logging.getLogger("ginkgodb.router")
#: find's fields the router passes to the shard unchanged (the general path does the same with them)
FORWARDED = frozenset({"find", "filter", "projection", "sort", "limit", "skip", "batchSize", "singleBatch", "hint",
                       "comment", "maxTimeMS", "readConcern", "allowDiskUse", "noCursorTimeout", "$db"})
#: the client's session and gossip fields: the router's own, not sent to the shard (crud.ROUTER_ONLY)
STRIPPED = frozenset({"lsid", "$clusterTime", "$readPreference"})
_KNOWN = FORWARDED | STRIPPED
#: databases whose finds the router answers or routes itself (dispatch.py)
INTERNAL = frozenset({"config", "admin", "local"})
#: an uncompressed OP_MSG, flags 0 (no checksum, moreToCome or exhaust), its body section next
_PLAIN_BODY = b"\0\0\0\0\0"
#: the body document's first element: the string `find`
_FIND = b"\x02find\x00"
_I32 = struct.Struct("<i")
_unpack_i32 = _I32.unpack_from
#: value sizes of the fixed-width BSON types
_FIXED = {0x01: 8, 0x06: 0, 0x07: 12, 0x08: 1, 0x09: 8, 0x0A: 0, 0x10: 4, 0x11: 8, 0x12: 8, 0x13: 16, 0xFF: 0,
          0x7F: 0}
_SELF_SIZED = frozenset({0x03, 0x04, 0x0F})
_STRINGS = frozenset({0x02, 0x0D, 0x0E})
_NUMBERS = {0x01: struct.Struct("<d"), 0x10: _I32, 0x12: struct.Struct("<q")}
_VERSIONS: weakref.WeakKeyDictionary[ChunkMap, dict[str, bytes]] = weakref.WeakKeyDictionary()

Answer = Union[bytes, dict, None]


def version_element(cmap: ChunkMap, shard: str) -> bytes:
    """The `shardVersion` element (type, name, value) of `cmap` for `shard`, encoded once per map."""
    per_shard = _VERSIONS.get(cmap)
    if per_shard is None:
        per_shard = _VERSIONS[cmap] = {}
    element = per_shard.get(shard)
    if element is None:
        value = version_field(cmap.epoch, cmap.timestamp, cmap.shard_version(shard))
        element = per_shard[shard] = bson.encode({"shardVersion": value})[4:-1]
    return element


def spans(raw: bytes, start: int = 0) -> list[tuple[bytes, int, int, int]]:
    """(name, type, element start, value start) of each top-level element of the document at
    `start`, and a last entry (b"", 0, end, end) whose start is where the elements end: a
    loop over the bytes without a generator or a call per element (this runs twice per
    forwarded read; bsonutil.delta.elements walks the same bytes for general use)."""
    out = []
    end = start + _unpack_i32(raw, start)[0] - 1
    pos = start + 4
    index = raw.index
    while pos < end:
        t = raw[pos]
        value = index(b"\0", pos + 1) + 1
        out.append((raw[pos + 1:value - 1], t, pos, value))
        size = _FIXED.get(t)
        if size is not None:
            pos = value + size
        elif t in _SELF_SIZED:                # document, array, code with scope
            pos = value + _unpack_i32(raw, value)[0]
        elif t in _STRINGS:                   # string, code, symbol
            pos = value + 4 + _unpack_i32(raw, value)[0]
        elif t == 0x05:                       # binary: length, subtype, bytes
            pos = value + 5 + _unpack_i32(raw, value)[0]
        elif t == 0x0B:                       # regex: two C strings
            pos = index(b"\0", index(b"\0", value) + 1) + 1
        elif t == 0x0C:                       # DBPointer: string, ObjectId
            pos = value + 4 + _unpack_i32(raw, value)[0] + 12
        else:
            raise ValueError(f"unknown BSON type 0x{t:02x}")
    if pos != end:
        raise ValueError("a BSON element runs past its document")
    out.append((b"", 0, end, end))
    return out


def shard_request(raw: bytes, cmd: Mapping, version: bytes) -> bytes:
    """The request for the shard: the client's document `raw` (decoded: `cmd`) without the
    STRIPPED fields, with `version` (an element's bytes, or empty) spliced in before its last
    byte. When there is nothing to cut, the client's bytes themselves; otherwise the fields
    kept are encoded again by pymongo's C encoder, which measured half the time of cutting the
    slices out with a walk of the elements in Python (8.5 vs 17 us for a driver's find)."""
    if STRIPPED.isdisjoint(cmd):
        doc = raw
    else:
        doc = bson.encode({k: v for k, v in cmd.items() if k not in STRIPPED})
    if not version:
        return doc
    return b"".join((_I32.pack(len(doc) + len(version)), memoryview(doc)[4:-1], version, b"\0"))


def _number(reply: bytes, t: int, at: int) -> Any:
    number = _NUMBERS.get(t)
    return number.unpack_from(reply, at)[0] if number is not None else None


def _ok_and_cursor_id(reply: bytes, start: int) -> tuple[Any, Any]:
    """(`ok`, `cursor.id`) of the reply document at `start`, read from its bytes (None: absent)."""
    ok = cursor = None
    for name, t, _, value in spans(reply, start):
        if name == b"ok":
            ok = _number(reply, t, value)
        elif name == b"cursor" and t == 0x03:
            cursor = value
    if cursor is None:
        return ok, None
    for name, t, _, value in spans(reply, cursor):
        if name == b"id":
            return ok, _number(reply, t, value)
    return ok, None


def answer(router: Router, frame: Frame, reply_id: int) -> Answer:
    """The reply to `frame` when one shard answers it whole: the reply message (bytes), or the
    reply document (a dict, with `ok`) of a find whose shard cursor stays open; None: take the
    general path."""
    header, body = frame
    if header.op_code != OP_MSG or body[:5] != _PLAIN_BODY or body[9:15] != _FIND:
        return None
    raw = body[5:]
    if len(raw) < 5 or _I32.unpack_from(raw)[0] != len(raw):   # one section only: the body document
        return None
    try:
        return _forward(router, header.request_id, raw, reply_id)
    except Exception:   # whatever went wrong, the general path answers (and reports it as before)
        log.debug("passthrough fell back to the general path", exc_info=True)
        return None


def _forward(router: Router, request_id: int, raw: bytes, reply_id: int) -> Answer:
    cmd = bson.decode(raw)   # pymongo's C decoder: the request's values, and its validity
    if not cmd.keys() <= _KNOWN:
        return None
    db, coll, filter = cmd.get("$db"), cmd["find"], cmd.get("filter", {})
    if type(db) is not str or not db or db in INTERNAL or not coll or type(filter) is not dict:
        return None
    cmap = router.chunk_map(f"{db}.{coll}")
    if cmap is None:
        shard = router.primary_shard(db, create=False)   # a new database: the general path parses first
        version = b""
    else:
        projection = cmd.get("projection")
        if isinstance(projection, Mapping) and any(k == "$" or k.endswith(".$") for k in projection):
            return None   # refused on a sharded collection (crud._run_find)
        shard = point_shard(filter, cmap) if filter else None
        version = version_element(cmap, shard) if shard else b""
    if not shard:
        return None
    pool = router.shards.primary_pool(shard)
    if pool is None:
        return None
    try:
        reply = pool.exchange_bytes(shard_request(raw, cmd, version))
    except OSError:
        router.shards.lost(shard, pool)
        return None
    size = _I32.unpack_from(reply, 21)[0]
    ok, cursor_id = _ok_and_cursor_id(reply, 21)
    if ok != 1.0 or cursor_id is None:
        return None
    if cursor_id == 0 and size == len(reply) - 21:
        return shard_reply_message(reply, reply_id, request_id)
    if cursor_id == 0:
        return None
    shard_reply = RawBSONDocument(reply[21:21 + size], RAW)
    try:
        out = adopt_one_shard_cursor(router, cmd, shard, shard_reply)
    except Exception:
        try:
            router.shards.command(shard, db, {"killCursors": coll, "cursors": [Int64(cursor_id)]}, stale_check=False)
        except Exception:
            log.debug("could not kill cursor %s on %s", cursor_id, shard, exc_info=True)
        return None
    out["ok"] = 1.0
    return out


def shard_reply_message(reply: bytes, reply_id: int, response_to: int) -> bytes:
    """A shard's reply message with the router's ids in its header (the rest unchanged)."""
    return b"".join((HEADER.pack(len(reply), reply_id, response_to, OP_MSG), memoryview(reply)[16:]))


__all__ = ["answer", "FORWARDED", "STRIPPED", "shard_request", "version_element", "shard_reply_message"]
