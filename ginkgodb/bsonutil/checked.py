"""Raw BSON documents checked for an insert ahead of time, possibly in another process.

A restore or an import spends a third of its insert time decoding each document, which is how
the engine checks that the bytes are valid BSON and reads `_id`. `check_documents` does that same
decode where it can run beside the inserting process (a worker process of the tools), and
`CheckedRaw` carries the result: the bytes and the `_id` index key. The engine's bulk insert
path then stores a `CheckedRaw` without decoding it again.

Only the plain case is vouched for: bytes that decode, `_id` first, an `_id` of a plain type
(ObjectId, int, str, float), no top-level Timestamp (the server fills in `Timestamp(0, 0)`) and
a size below which nesting depth cannot matter. Any other document gets no key and takes the
engine's ordinary checks, which give its error or fix it up exactly as for any other caller.
Nothing but a `CheckedRaw` built from `check_documents`' answer, or by `vouch_encoded` for bytes
the embedded client encoded itself (valid BSON, `_id` first, by construction), skips a check:
the wire server never makes one.
"""
from __future__ import annotations

import re
from itertools import chain
from operator import attrgetter, methodcaller
from typing import Optional

from bson import decode
from bson.dbref import DBRef
from bson.objectid import ObjectId
from bson.raw_bson import DEFAULT_RAW_BSON_OPTIONS, RawBSONDocument
from bson.timestamp import Timestamp

from ..limits import MAX_BSON_OBJECT_SIZE
from .keycodec import encode_key
from .types import TYPE_ALIASES

#: the `_id` types whose key needs no per-type check (`engine.documents._PLAIN_ID_TYPES`)
PLAIN_ID_TYPES = frozenset((ObjectId, int, str, float))
#: below this size a document cannot nest 100 levels deep, mongod's limit (`engine.documents`)
SHALLOW_BELOW = 5 + 7 * 100
#: a larger document is vouched for when it nests at most this deep: far from the limit, so
#: the boundary's exact rule stays the engine's alone
VOUCHED_DEPTH = 50
_TIMESTAMP = frozenset((Timestamp,))
_CONTAINERS = frozenset((dict, list, DBRef))


# RawBSONDocument's own fields (pymongo keeps them in these slots since 3.x): a CheckedRaw sets
# them itself, without RawBSONDocument.__init__'s size check, which `check_documents` has done
# already by decoding the bytes whole (a third of the cost of building one per document)
_FIELDS = ("__raw", "__inflated_doc", "__codec_options")
_DIRECT = set(_FIELDS) <= set(getattr(RawBSONDocument, "__slots__", ()))


class CheckedRaw(RawBSONDocument):
    """A document `check_documents` passed, with the encoded key of its `_id`."""
    __slots__ = ("id_key",)

    if _DIRECT:
        def __init__(self, raw: bytes, id_key: bytes) -> None:
            self._RawBSONDocument__raw = raw
            self._RawBSONDocument__inflated_doc = None
            self._RawBSONDocument__codec_options = DEFAULT_RAW_BSON_OPTIONS
            self.id_key = id_key
    else:       # another layout of RawBSONDocument: its own constructor
        def __init__(self, raw: bytes, id_key: bytes) -> None:
            super().__init__(raw)
            self.id_key = id_key


#: the `_id` key of a CheckedRaw, and its bytes, read at C speed (no property call per document)
id_key_of = attrgetter("id_key")
raw_of = attrgetter("_RawBSONDocument__raw") if _DIRECT else attrgetter("raw")


def check_one(raw: bytes) -> Optional[bytes]:
    """The `_id` key of `raw` when it is a plain valid document, else None (not an error:
    the engine's ordinary path checks such a document and reports what is wrong)."""
    size = len(raw)
    if size > MAX_BSON_OBJECT_SIZE:
        return None
    try:
        d = decode(raw)
    except Exception:
        return None
    if not d or next(iter(d)) != "_id" or not _TIMESTAMP.isdisjoint(map(type, d.values())):
        return None
    if size >= SHALLOW_BELOW and not _shallow(d, VOUCHED_DEPTH):
        return None
    value = d["_id"]
    if type(value) not in PLAIN_ID_TYPES:
        return None
    return encode_key((value,))


#: an ObjectId `_id`'s index key before its 12 bytes (the engine's bulk insert reads it too)
OID_KEY_PREFIX = encode_key((ObjectId(bytes(12)),))[:-12]
_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def vouch_encoded(raw: bytes, doc: dict) -> RawBSONDocument:
    """`raw`, which `bson.encode` made from `doc` with codec options that encode plain values as
    the defaults do (no custom encoders: each value's Python type is its BSON type), as the
    engine should receive it: a CheckedRaw in the plain case `check_one` vouches for (a plain
    `_id`, no top-level Timestamp, small enough to be shallow), read from `doc` instead of
    decoding `raw`; else a RawBSONDocument the engine checks."""
    value = doc.get("_id")
    kind = type(value)
    if (kind in PLAIN_ID_TYPES and len(raw) < SHALLOW_BELOW and _TIMESTAMP.isdisjoint(map(type, doc.values()))
            and (kind is not int or _INT32_MIN <= value <= _INT32_MAX)   # a wider int decodes as Int64
            and _dates_decodable(raw)):
        return CheckedRaw(raw, OID_KEY_PREFIX + value.binary if kind is ObjectId else encode_key((value,)))
    return RawBSONDocument(raw)


_OBJECT_ID_ONLY = {ObjectId}
_ID = methodcaller("get", "_id")
_BINARY = attrgetter("binary")


def vouch_all(raws: list[bytes], docs: list[dict]) -> list[RawBSONDocument]:
    """`vouch_encoded` of each document, in C-speed maps when every one has an ObjectId `_id`,
    none a top-level Timestamp and all are small (the dates, looked for per document, decide
    alone); else one `vouch_encoded` at a time."""
    ids = list(map(_ID, docs))
    if (not raws or set(map(type, ids)) != _OBJECT_ID_ONLY or max(map(len, raws)) >= SHALLOW_BELOW
            or not _TIMESTAMP.isdisjoint(map(type, chain.from_iterable(map(dict.values, docs))))):
        return list(map(vouch_encoded, raws, docs))
    keys = map(OID_KEY_PREFIX.__add__, map(_BINARY, ids))
    dates = list(map(_dates_decodable, raws))
    if all(dates):
        return list(map(CheckedRaw, raws, keys))
    return [CheckedRaw(raw, key) if decodable else RawBSONDocument(raw)
            for raw, key, decodable in zip(raws, keys, dates)]


#: the dates pymongo's default decode gives a datetime for, in milliseconds (datetime.min and
#: datetime.max); check_one's decode refuses any other
_DATE_MIN, _DATE_MAX = -62_135_596_800_000, 253_402_300_799_999


def _dates_decodable(raw: bytes) -> bool:
    """True when no date element of `raw` lies outside the range a decode gives a datetime for.
    Every byte 0x09 is taken for a date's type byte and the 8 bytes after the next NUL for its
    value, when what follows them may follow an element (closing NULs, then a type byte or the
    end): a real date element is never missed, a false one only costs the vouching. One search
    in C finds the places where such a date may lie outside the range (`_MAYBE_FAR_DATE`); only
    when it finds one does the walk below decide, which costs about 3,000 instructions a 0x09
    byte (a third of a 600-byte document's encoding, for its int32 9s and its dates)."""
    if _MAYBE_FAR_DATE.search(raw, 4) is None:
        return True
    return _dates_walked(raw)


def _dates_walked(raw: bytes) -> bool:
    """`_dates_decodable`, deciding every candidate 0x09 byte in Python (vouched documents are
    small, so the searches stay short)."""
    find, size = raw.find, len(raw)
    at = find(b"\x09", 4)
    while at != -1:
        end = find(b"\x00", at + 1)
        if end == -1:
            return True
        # a real element is followed by the closing NULs of the documents it ends, if any, then
        # by the next element's type byte or the end of the bytes
        after = end + 9
        while after < size and raw[after] == 0:
            after += 1
        if (end + 9 <= size and (after == size or raw[after] in _TYPE_BYTES)
                and not _DATE_MIN <= int.from_bytes(raw[end + 1:end + 9], "little", signed=True) <= _DATE_MAX):
            return False
        at = find(b"\x09", at + 1)
    return True


#: the type bytes of BSON elements (minKey's -1 is the byte 0xFF)
_TYPE_BYTES = frozenset(number & 0xFF for number in TYPE_ALIASES.values())
#: a date's value bytes (little-endian int64) certainly in that range: 0 to 2**47 - 1 (the
#: year 6429) and -2**45 to -1 (the year 855)
_NEAR_DATE = rb"[\s\S]{5}(?:[\x00-\x7f]\x00\x00|[\xe0-\xff]\xff\xff)"
#: a 0x09 byte `_dates_walked` might take for a date outside the range: a name up to a NUL, 8
#: bytes that are not certainly in it, then what may follow an element (a superset of the walk's
#: test, as a lookahead, so that every 0x09 byte is tried)
_MAYBE_FAR_DATE = re.compile(rb"\x09(?=[^\x00]*\x00(?!" + _NEAR_DATE + rb")[\s\S]{8}\x00*(?:["
                             + b"".join(re.escape(bytes((b,))) for b in sorted(_TYPE_BYTES)) + rb"]|\Z))")


def _shallow(value: object, levels: int) -> bool:
    """True when `value`'s containers nest at most `levels` deep (the value itself counts)."""
    if levels <= 0 or type(value) is DBRef:     # a DBRef's own fields: left to the engine
        return False
    if type(value) is dict:
        items = value.values()
    elif type(value) is list:
        items = value
    else:
        return True
    return all(_shallow(v, levels - 1) for v in items if type(v) in _CONTAINERS)


def check_documents(raws: list[bytes]) -> list[Optional[bytes]]:
    """`check_one` of each document."""
    return list(map(check_one, raws))


def checked(raws: list[bytes], keys: list[Optional[bytes]]) -> list[RawBSONDocument]:
    """The documents to insert: a `CheckedRaw` where a key was found, else a plain one."""
    if None not in keys:        # the usual batch: every document vouched for
        return list(map(CheckedRaw, raws, keys))
    return [RawBSONDocument(raw) if key is None else CheckedRaw(raw, key)
            for raw, key in zip(raws, keys)]
