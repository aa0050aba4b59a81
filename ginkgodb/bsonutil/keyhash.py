"""MongoDB's hashed-index hash: MD5 over (seed, canonical type, value), first 8 bytes as int64.

Hashed index keys must be the values mongod computes (they are visible through
`convertShardKeyToHashed` and decide chunk placement), so this follows mongod's BSONElementHasher:
numbers are squashed to int64 first (doubles truncate toward zero, NaN -> 0, out-of-range values
clamp, the double 2^63 maps to -2^63 for historical compatibility; Decimal128 rounds half-to-even),
so 2, 2.3 and Decimal128("2") hash alike. Objects hash by content: each element contributes its
canonical type, field name (NUL-terminated) and value, then an end-of-object marker.
Deterministic across processes and platforms (no Python `hash`).
"""
from __future__ import annotations

import decimal
import hashlib
import math
import struct
from typing import Any

from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.int64 import Int64

from . import types as T
from .compare import binary_parts, date_millis, regex_parts

DEFAULT_SEED = 0

_I32 = struct.Struct("<i").pack
_I64 = struct.Struct("<q").pack
_U64 = struct.Struct("<Q").pack
_LLONG_MIN = -(1 << 63)
_LLONG_MAX = (1 << 63) - 1
_TWO_63 = 2.0 ** 63

# mongod's canonicalizeBSONType values (not our brackets: these feed the hash).
_CANON = {
    T.BRACKET_MINKEY: -1, T.BRACKET_UNDEFINED: 0, T.BRACKET_NULL: 5, T.BRACKET_NUMBER: 10,
    T.BRACKET_STRING: 15, T.BRACKET_OBJECT: 20, T.BRACKET_ARRAY: 25, T.BRACKET_BINARY: 30,
    T.BRACKET_OBJECTID: 35, T.BRACKET_BOOL: 40, T.BRACKET_DATE: 45, T.BRACKET_TIMESTAMP: 47,
    T.BRACKET_REGEX: 50, T.BRACKET_DBPOINTER: 55, T.BRACKET_CODE: 60, T.BRACKET_CODE_WSCOPE: 65,
    T.BRACKET_MAXKEY: 127,
}
_EOO = _I32(0)
_md5 = hashlib.md5
_first_i64 = struct.Struct("<q").unpack_from
#: what the default seed and the canonical type put before a number's or a string's value bytes
_NUMBER_PREFIX = _I32(DEFAULT_SEED) + _I32(_CANON[T.BRACKET_NUMBER])
_STRING_PREFIX = _I32(DEFAULT_SEED) + _I32(_CANON[T.BRACKET_STRING])


def hash_value(value: Any, seed: int = DEFAULT_SEED) -> int:
    """Signed 64-bit hash of one BSON value, identical to mongod's hashed index key. An int64
    or a string (most shard keys, hashed once per routed request) is hashed in one MD5 call
    over bytes built here; every other value walks _feed."""
    kind = type(value)
    if seed == DEFAULT_SEED:
        if (kind is int or kind is Int64) and _LLONG_MIN <= value <= _LLONG_MAX:
            return _first_i64(_md5(_NUMBER_PREFIX + _I64(value)).digest())[0]
        if kind is str:
            return _first_i64(_md5(_STRING_PREFIX + _bson_string(value)).digest())[0]
    h = hashlib.md5(_I32(seed))
    _feed(h, value)
    return _first_i64(h.digest())[0]


def number_for_hash(v: Any) -> int:
    """mongod's safeNumberLongForHash: the int64 a number is squashed to before hashing."""
    if isinstance(v, float):
        if math.isnan(v):
            return 0
        if v == _TWO_63:
            return _LLONG_MIN
        if not v < _TWO_63:
            return _LLONG_MAX
        if v < -_TWO_63:
            return _LLONG_MIN
        return int(v)
    if isinstance(v, (Decimal128, decimal.Decimal)):
        d = v.to_decimal() if isinstance(v, Decimal128) else v
        if d.is_nan():
            return 0
        if d > _LLONG_MAX:
            return _LLONG_MAX
        if d < _LLONG_MIN:
            return _LLONG_MIN
        return int(d.to_integral_value(rounding=decimal.ROUND_HALF_EVEN))
    return max(_LLONG_MIN, min(_LLONG_MAX, int(v)))


def _feed(h: Any, v: Any, name: str | None = None) -> None:
    b = T.bracket(v)
    h.update(_I32(_CANON[b]))
    if name is not None:
        h.update(name.encode("utf-8", "surrogatepass") + b"\x00")
    if b == T.BRACKET_NUMBER:
        h.update(_I64(number_for_hash(v)))
    elif b == T.BRACKET_STRING:
        h.update(_bson_string(v))
    elif b == T.BRACKET_OBJECT:
        _feed_elements(h, v.as_doc().items() if isinstance(v, DBRef) else v.items())
    elif b == T.BRACKET_ARRAY:
        _feed_elements(h, ((str(i), x) for i, x in enumerate(v)))
    elif b == T.BRACKET_CODE_WSCOPE:
        h.update(str(v).encode("utf-8", "surrogatepass") + b"\x00")
        _feed_elements(h, v.scope.items())
    else:
        h.update(_scalar_bytes(b, v))


def _feed_elements(h: Any, items: Any) -> None:
    for key, value in items:
        _feed(h, value, key)
    h.update(_EOO)  # the end-of-object element: canonical type 0, empty field name


def _bson_string(s: str) -> bytes:
    data = s.encode("utf-8", "surrogatepass")
    return _I32(len(data) + 1) + data + b"\x00"


def _scalar_bytes(b: int, v: Any) -> bytes:
    """The BSON value bytes of a non-container element, as mongod feeds them to the hash."""
    if b == T.BRACKET_OBJECTID:
        return v.binary
    if b == T.BRACKET_BOOL:
        return b"\x01" if v else b"\x00"
    if b == T.BRACKET_DATE:
        return _I64(date_millis(v))
    if b == T.BRACKET_TIMESTAMP:
        return _U64((v.time << 32) | v.inc)
    if b == T.BRACKET_BINARY:
        return _binary_bytes(v)
    if b == T.BRACKET_REGEX:
        pattern, flags = regex_parts(v)
        return pattern.encode("utf-8", "surrogatepass") + b"\x00" + flags.encode() + b"\x00"
    if b == T.BRACKET_CODE:
        return _bson_string(str(v))
    return b""  # null, undefined, MinKey, MaxKey carry no value bytes


def _binary_bytes(v: Any) -> bytes:
    _, subtype, data = binary_parts(v)
    if subtype == 2:  # the old binary subtype repeats its length inside the payload
        return _I32(len(data) + 4) + b"\x02" + _I32(len(data)) + data
    return _I32(len(data)) + bytes([subtype]) + data


__all__ = ["hash_value", "number_for_hash", "DEFAULT_SEED"]
