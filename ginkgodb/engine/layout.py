"""Where things live in the ordered key space. Spec: docs/design/storage-layout.md.

Every byte here is persisted: DO NOT CHANGE the prefixes or widths; bump FORMAT_VERSION and write a
migration instead.
"""
from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, Optional

FORMAT_VERSION = 1

META = b"\x00"          # META + name -> value (format version, id counters)
CATALOG = b"\x01"       # CATALOG + db + 0x00 + collection -> BSON collection entry
RECORD = b"\x02"        # RECORD + collection id (4) + record id (8) -> BSON document
INDEX = b"\x03"         # INDEX + index id (4) + encoded key + record id (8) -> b""

META_FORMAT = META + b"format"
META_NEXT_ID = META + b"next_id"
META_CATALOG_GEN = META + b"catalog_gen"   # u64: bumped by every batch that changes the catalog
META_RETRYABLE = META + b"rw"              # + lsid UUID (16) -> BSON {txnNumber, result}
META_COLL_STATS = META + b"coll"           # + collection id (4) -> next record id, documents, bytes
META_ZSTD_DICT = META + b"zdict"           # + dictionary id (8) -> a trained zstd dictionary
META_INDEX_USAGE = META + b"ixuse"         # + index id (4) -> $indexStats ops, since (index_usage.py)
META_QUERY_STATS = META + b"qstats"        # BSON: $queryStats shapes and top at the last close

_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
RID_WIDTH = 8


def catalog_key(db: str, coll: str) -> bytes:
    return CATALOG + db.encode() + b"\x00" + coll.encode()


def catalog_db_prefix(db: str) -> bytes:
    return CATALOG + db.encode() + b"\x00"


def parse_catalog_key(key: bytes) -> tuple[str, str]:
    db, _, coll = key[1:].partition(b"\x00")
    return db.decode(), coll.decode()


def record_prefix(coll_id: int) -> bytes:
    return RECORD + _U32.pack(coll_id)


def record_key(coll_id: int, rid: int) -> bytes:
    return RECORD + _U32.pack(coll_id) + _U64.pack(rid)


def rid_of_record_key(key: bytes) -> int:
    return _U64.unpack_from(key, 5)[0]


def index_prefix(index_id: int) -> bytes:
    return INDEX + _U32.pack(index_id)


#: a record id's 8 bytes (the struct's own pack: no Python frame, every record key is one)
rid_bytes: Callable[[int], bytes] = _U64.pack


def rid_from_entry(key: bytes) -> int:
    """The record id at the end of an index entry key."""
    return _U64.unpack_from(key, len(key) - RID_WIDTH)[0]


def coll_stats_key(coll_id: int) -> bytes:
    """Three u64s kept in every write's transaction: the next record id, the document count and
    the data size of the collection (absent in older data directories: counted once)."""
    return META_COLL_STATS + _U32.pack(coll_id)


def zstd_dictionary_key(did: int) -> bytes:
    """A zstd dictionary, under the id its records carry (record_format.dictionary_id)."""
    return META_ZSTD_DICT + _U64.pack(did)


def zstd_dictionary_of_key(key: bytes) -> int:
    return _U64.unpack_from(key, len(META_ZSTD_DICT))[0]


def session_key(lsid: Any) -> Optional[bytes]:
    """The catalog key of an lsid document ({id: UUID}); None when it has no UUID (here so the
    oplog applier, which stores replicated retry records, needs no session catalog)."""
    try:
        uid = lsid["id"]
    except (KeyError, TypeError):
        return None
    if isinstance(uid, bytes):
        return bytes(uid)
    as_bytes = getattr(uid, "bytes", None)
    return bytes(as_bytes) if as_bytes is not None else None


def retryable_write_key(session_key: bytes) -> bytes:
    """The last retryable write of a session: its txnNumber and what it answered."""
    return META_RETRYABLE + session_key


def stored_catalog_gen(snap) -> int:
    """The catalog generation a snapshot holds (0 for a data directory that never stored one)."""
    raw = snap.get(META_CATALOG_GEN)
    return _U64.unpack(raw)[0] if raw else 0


def pack_u64(n: int) -> bytes:
    return _U64.pack(n)


def unpack_u64(b: bytes) -> int:
    return _U64.unpack(b)[0]
