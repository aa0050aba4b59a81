"""Record ids as index entries and record keys spell them: u64 for ordinary collections, the
encoded `_id` key for clustered ones (docs/design/clustered-collections.md).

A secondary index entry of a clustered collection ends with the record id followed by its length
as a big-endian u32, so the id can be read back from the entry's end.
"""
from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from . import layout

_LEN = struct.Struct(">I")


class IntRecordIds:
    """Record ids of ordinary collections: u64, the last 8 bytes of an index entry."""

    __slots__ = ()

    @staticmethod
    def suffix(rid: Any) -> bytes:
        return layout.rid_bytes(rid)

    of_entry = staticmethod(layout.rid_from_entry)

    @staticmethod
    def key_of_entry(entry: bytes, start: int) -> bytes:
        return entry[start:-layout.RID_WIDTH]

    @staticmethod
    def record_key(prefix: bytes, rid: Any) -> bytes:
        return prefix + layout.rid_bytes(rid)

    @staticmethod
    def record_key_of(prefix: bytes) -> Callable[[Any], bytes]:
        """record_key with `prefix` bound, as one call (a fetch makes one per record)."""
        pack = layout.rid_bytes
        return lambda rid: prefix + pack(rid)

    @staticmethod
    def of_record_key(key: bytes) -> Any:
        return layout.rid_of_record_key(key)


class ClusteredRecordIds:
    """Record ids of clustered collections: the encoded `_id` key (bytes)."""

    __slots__ = ()

    @staticmethod
    def suffix(rid: Any) -> bytes:
        return rid + _LEN.pack(len(rid))

    @staticmethod
    def of_entry(entry: bytes) -> Any:
        n = _LEN.unpack_from(entry, len(entry) - 4)[0]
        return entry[len(entry) - 4 - n:len(entry) - 4]

    @staticmethod
    def key_of_entry(entry: bytes, start: int) -> bytes:
        n = _LEN.unpack_from(entry, len(entry) - 4)[0]
        return entry[start:len(entry) - 4 - n]

    @staticmethod
    def record_key(prefix: bytes, rid: Any) -> bytes:
        return prefix + rid

    @staticmethod
    def record_key_of(prefix: bytes) -> Callable[[Any], bytes]:
        return lambda rid: prefix + rid

    @staticmethod
    def of_record_key(key: bytes) -> Any:
        return key[5:]   # RECORD + u32 collection id


INT_RIDS = IntRecordIds()
CLUSTERED_RIDS = ClusteredRecordIds()
