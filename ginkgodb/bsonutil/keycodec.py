"""Order-preserving, prefix-free byte encoding of BSON values (index keys and sort keys).

Byte order of `encode_value` equals `compare.compare` order, values that compare equal encode to
identical bytes (int32 1, Int64(1), 1.0 and Decimal128("1.0") share one encoding), and no
encoding is a proper prefix of another, so descending components can be stored bit-inverted and
compound keys concatenate. The format is specified in docs/design/keycodec.md (format version 1):
these bytes are persisted in indexes, DO NOT CHANGE them.
"""
from __future__ import annotations

import datetime
import decimal
import math
import re
import struct
import uuid
from collections.abc import Sequence
from typing import Any

from bson.binary import Binary
from bson.code import Code
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from . import types as T
from .compare import binary_parts, date_millis, object_items, regex_parts
from .keyhash import hash_value  # re-exported: hashed index keys are part of the key layer

__all__ = ["encode_value", "encode_key", "decode_key", "decode_value", "hash_value", "invert",
           "bracket_min", "bracket_max", "MIN_KEY", "MAX_KEY", "FORMAT_VERSION"]

FORMAT_VERSION = 1

# Number tags (second byte of a number). Persisted: DO NOT CHANGE.
NUM_NAN = 0x01
NUM_NEG_INF = 0x02
NUM_NEG_HUGE = 0x03    # finite, below -DBL_MAX (Decimal128 only)
NUM_FINITE = 0x04      # |x| <= DBL_MAX: 8-byte double, then the exact remainder
NUM_POS_HUGE = 0x05    # finite, above DBL_MAX
NUM_POS_INF = 0x06
# Remainder tags after the double of NUM_FINITE: x = double + remainder.
REM_NEG = 0x01
REM_ZERO = 0x02
REM_POS = 0x03

_INVERT = bytes(255 - i for i in range(256))
_PACK_D = struct.Struct(">d").pack
_UNPACK_Q = struct.Struct(">Q").unpack
_PACK_Q = struct.Struct(">Q").pack
_UNPACK_D = struct.Struct(">d").unpack
_PACK_I = struct.Struct(">I").pack
_UNPACK_I = struct.Struct(">I").unpack
_SIGN = 1 << 63
_ALL = (1 << 64) - 1
_EXACT_INT = 1 << 53
_DBL_MAX_DEC = decimal.Decimal(float.fromhex("0x1.fffffffffffffp+1023"))
# Wide enough to hold any Decimal128 minus its nearest double exactly; Inexact would be a bug.
_EXACT = decimal.Context(prec=2000, Emin=-20000, Emax=20000, traps=[decimal.Inexact, decimal.Rounded])
_EXP_BIAS = 0x8000

_B_NUMBER = bytes([T.BRACKET_NUMBER])
_B_STRING = bytes([T.BRACKET_STRING])
_STR_END = b"\x00\x00"
_NUM_ZERO = _B_NUMBER + bytes([NUM_FINITE]) + _PACK_Q(_SIGN) + bytes([REM_ZERO])
_NUM_NAN = _B_NUMBER + bytes([NUM_NAN])
_NUM_NEG_INF = _B_NUMBER + bytes([NUM_NEG_INF])
_NUM_POS_INF = _B_NUMBER + bytes([NUM_POS_INF])
_NULL = bytes([T.BRACKET_NULL])
_TRUE = bytes([T.BRACKET_BOOL, 1])
_FALSE = bytes([T.BRACKET_BOOL, 0])
_OID = bytes([T.BRACKET_OBJECTID])
_DATE = bytes([T.BRACKET_DATE])


# ---------------------------------------------------------------- numbers

def _double_bits(d: float) -> bytes:
    """8 bytes whose unsigned order is the order of finite doubles (d must not be -0.0)."""
    u = _UNPACK_Q(_PACK_D(d))[0]
    return _PACK_Q(u ^ _ALL if u & _SIGN else u ^ _SIGN)


def _enc_float(d: float) -> bytes:
    if d != d:
        return _NUM_NAN
    if d == 0.0:
        return _NUM_ZERO
    if d == math.inf:
        return _NUM_POS_INF
    if d == -math.inf:
        return _NUM_NEG_INF
    return b"\x14\x04" + _double_bits(d) + b"\x02"


def _enc_int(v: int) -> bytes:
    if 0 < v <= _EXACT_INT:   # the commonest key (ids, counters): _double_bits of a positive, inline
        return b"\x14\x04" + _PACK_Q(_UNPACK_Q(_PACK_D(v))[0] ^ _SIGN) + b"\x02"
    if -_EXACT_INT <= v <= _EXACT_INT:
        if v == 0:
            return _NUM_ZERO
        return b"\x14\x04" + _double_bits(float(v)) + b"\x02"
    return _enc_exact(decimal.Decimal(int(v)))


def _enc_decimal(v: Decimal128 | decimal.Decimal) -> bytes:
    dec = v.to_decimal() if isinstance(v, Decimal128) else v
    if dec.is_nan():
        return _NUM_NAN
    if dec.is_infinite():
        return _NUM_NEG_INF if dec < 0 else _NUM_POS_INF
    return _enc_exact(dec)


def _enc_exact(dec: decimal.Decimal) -> bytes:
    """A finite number given exactly as a Decimal (big Int64s, Decimal128s)."""
    if dec.is_zero():
        return _NUM_ZERO
    if dec.copy_abs() > _DBL_MAX_DEC:
        mag = _magnitude(dec.copy_abs())
        if dec > 0:
            return bytes([T.BRACKET_NUMBER, NUM_POS_HUGE]) + mag
        return bytes([T.BRACKET_NUMBER, NUM_NEG_HUGE]) + mag.translate(_INVERT)
    d = float(dec)  # correctly rounded, hence monotonic
    if d == 0.0:
        d = 0.0
    rem = _EXACT.subtract(dec, decimal.Decimal(d))
    head = b"\x14\x04" + (_double_bits(d) if d else _PACK_Q(_SIGN))
    if rem.is_zero():
        return head + b"\x02"
    if rem > 0:
        return head + b"\x03" + _magnitude(rem)
    return head + b"\x01" + _magnitude(rem.copy_negate()).translate(_INVERT)


def _magnitude(m: decimal.Decimal) -> bytes:
    """Positive m = 0.d1d2...dn x 10^E (d1 != 0, dn != 0): 2-byte biased E, digits+1, 0x00."""
    _, digits, exp = m.as_tuple()
    n = len(digits)
    while n and digits[n - 1] == 0:
        n -= 1
    adjusted = exp + len(digits)
    return (adjusted + _EXP_BIAS).to_bytes(2, "big") + bytes(d + 1 for d in digits[:n]) + b"\x00"


# ---------------------------------------------------------------- other scalars

def _str_body(s: str) -> bytes:
    b = s.encode("utf-8", "surrogatepass")
    if b"\x00" in b:
        b = b.replace(b"\x00", b"\x00\xff")
    return b + _STR_END


def _enc_str(s: str) -> bytes:
    b = s.encode("utf-8", "surrogatepass")
    if b"\x00" in b:
        b = b.replace(b"\x00", b"\x00\xff")
    return b"\x1e" + b + _STR_END


def _enc_code(c: Code) -> bytes:
    """Code follows whatever bracket `types.bracket` gives it, so bytes agree with compare()."""
    b = T.bracket(c)
    if b == T.BRACKET_STRING:
        return _B_STRING + _str_body(c)
    body = _str_body(c)
    if b == T.BRACKET_CODE_WSCOPE:
        body += _object_body(list(c.scope.items()))
    return bytes([b]) + body


def _enc_bool(v: bool) -> bytes:
    return _TRUE if v else _FALSE


def _enc_none(v: None) -> bytes:
    return _NULL


def _enc_oid(v: ObjectId) -> bytes:
    return _OID + v.binary


def _enc_date(v: datetime.datetime | DatetimeMS) -> bytes:
    return _DATE + _PACK_Q((date_millis(v) + _SIGN) & _ALL)


def _enc_timestamp(v: Timestamp) -> bytes:
    return bytes([T.BRACKET_TIMESTAMP]) + _PACK_I(v.time) + _PACK_I(v.inc)


def _enc_binary(v: Any) -> bytes:
    length, subtype, data = binary_parts(v)
    return bytes([T.BRACKET_BINARY]) + _PACK_I(length) + bytes([subtype]) + data


def _enc_regex(v: Any) -> bytes:
    pattern, flags = regex_parts(v)
    return bytes([T.BRACKET_REGEX]) + _str_body(pattern) + _str_body(flags)


def _single(bracket: int):
    out = bytes([bracket])
    return lambda v: out


# ---------------------------------------------------------------- containers

def _object_body(items: list[tuple[str, Any]]) -> bytes:
    parts = []
    for name, value in items:
        enc = encode_value(value)
        parts.append(enc[:1] + _str_body(name) + enc)
    parts.append(b"\x00")
    return b"".join(parts)


def _enc_object(v: Any) -> bytes:
    return bytes([T.BRACKET_OBJECT]) + _object_body(object_items(v))


def _enc_array(v: Any) -> bytes:
    return bytes([T.BRACKET_ARRAY]) + b"".join(map(encode_value, v)) + b"\x00"


_ENCODERS: dict[type, Any] = {
    int: _enc_int, Int64: _enc_int, float: _enc_float, str: _enc_str, bool: _enc_bool,
    type(None): _enc_none, ObjectId: _enc_oid, datetime.datetime: _enc_date, DatetimeMS: _enc_date,
    Decimal128: _enc_decimal, decimal.Decimal: _enc_decimal, dict: _enc_object, list: _enc_array,
    tuple: _enc_array, bytes: _enc_binary, Binary: _enc_binary, uuid.UUID: _enc_binary,
    Timestamp: _enc_timestamp, Regex: _enc_regex, re.Pattern: _enc_regex, Code: _enc_code,
    DBRef: _enc_object, MinKey: _single(T.BRACKET_MINKEY), MaxKey: _single(T.BRACKET_MAXKEY),
    T.Undefined: _single(T.BRACKET_UNDEFINED),
}
_BY_BRACKET: dict[int, Any] = {
    T.BRACKET_NUMBER: lambda v: _enc_decimal(decimal.Decimal(v)) if not isinstance(v, float) else _enc_float(v),
    T.BRACKET_STRING: lambda v: _B_STRING + _str_body(v), T.BRACKET_OBJECT: _enc_object,
    T.BRACKET_ARRAY: _enc_array, T.BRACKET_BINARY: _enc_binary, T.BRACKET_OBJECTID: _enc_oid,
    T.BRACKET_BOOL: _enc_bool, T.BRACKET_DATE: _enc_date, T.BRACKET_TIMESTAMP: _enc_timestamp,
    T.BRACKET_REGEX: _enc_regex, T.BRACKET_CODE: _enc_code, T.BRACKET_CODE_WSCOPE: _enc_code,
    T.BRACKET_NULL: _enc_none, T.BRACKET_MINKEY: _single(T.BRACKET_MINKEY),
    T.BRACKET_MAXKEY: _single(T.BRACKET_MAXKEY), T.BRACKET_UNDEFINED: _single(T.BRACKET_UNDEFINED),
}


def encode_value(v: Any) -> bytes:
    """Ascending encoding of one BSON value; the first byte is its type bracket."""
    enc = _ENCODERS.get(type(v))
    if enc is None:
        enc = _BY_BRACKET[T.bracket(v)]  # subclasses and Mapping types (SON, RawBSONDocument, ...)
    return enc(v)


def encode_key(values: Sequence[Any], directions: Sequence[int] | None = None) -> bytes:
    """Concatenated encodings; a component whose direction is negative is bit-inverted."""
    if directions is None:
        return b"".join(map(encode_value, values))
    parts = []
    for v, d in zip(values, directions):
        b = encode_value(v)
        parts.append(b.translate(_INVERT) if d < 0 else b)
    return b"".join(parts)


def invert(data: bytes) -> bytes:
    """Bitwise complement of every byte (how descending components are stored)."""
    return data.translate(_INVERT)


def bracket_min(bracket: int) -> bytes:
    """Sorts at or below every encoding whose type bracket is `bracket` (inclusive lower bound)."""
    return bytes([bracket])


def bracket_max(bracket: int) -> bytes:
    """Sorts above every encoding in `bracket` and at or below every later bracket (exclusive)."""
    return bytes([bracket + 1])


MIN_KEY = bytes([T.BRACKET_MINKEY])
MAX_KEY = bytes([T.BRACKET_MAXKEY])


# ---------------------------------------------------------------- decoding

def decode_key(data: bytes, directions: Sequence[int]) -> list[Any]:
    """Decode a compound key. Numbers come back canonical: NaN/inf and values that are exactly
    a non-integral double as `float`; integral values within int64 as `int`; anything else
    (huge or not a double) as `Decimal128`. Binary subtype 0 decodes as `bytes`, DBRef as `dict`,
    dates outside datetime's range as `DatetimeMS`."""
    inverted = None
    out = []
    pos = 0
    for d in directions:
        if d < 0:
            if inverted is None:
                inverted = data.translate(_INVERT)
            value, pos = _decode(inverted, pos)
        else:
            value, pos = _decode(data, pos)
        out.append(value)
    return out


def decode_value(data: bytes) -> Any:
    """Inverse of `encode_value` (up to the canonical number types of `decode_key`)."""
    return _decode(data, 0)[0]


def _decode(data: bytes, pos: int) -> tuple[Any, int]:
    b = data[pos]
    pos += 1
    if b == T.BRACKET_NUMBER:
        return _decode_number(data, pos)
    if b == T.BRACKET_STRING:
        return _decode_str(data, pos)
    if b == T.BRACKET_OBJECT:
        return _decode_object(data, pos)
    if b == T.BRACKET_ARRAY:
        arr = []
        while data[pos] != 0:
            v, pos = _decode(data, pos)
            arr.append(v)
        return arr, pos + 1
    if b == T.BRACKET_OBJECTID:
        return ObjectId(bytes(data[pos:pos + 12])), pos + 12
    if b == T.BRACKET_BOOL:
        return bool(data[pos]), pos + 1
    if b == T.BRACKET_DATE:
        return _decode_date(data, pos)
    if b == T.BRACKET_BINARY:
        length = _UNPACK_I(data[pos:pos + 4])[0]
        subtype = data[pos + 4]
        raw = bytes(data[pos + 5:pos + 5 + length])
        return (raw if subtype == 0 else Binary(raw, subtype)), pos + 5 + length
    if b == T.BRACKET_TIMESTAMP:
        return Timestamp(_UNPACK_I(data[pos:pos + 4])[0], _UNPACK_I(data[pos + 4:pos + 8])[0]), pos + 8
    if b == T.BRACKET_REGEX:
        pattern, pos = _decode_str(data, pos)
        flags, pos = _decode_str(data, pos)
        return Regex(pattern, flags), pos
    if b == T.BRACKET_CODE:
        code, pos = _decode_str(data, pos)
        return Code(code), pos
    if b == T.BRACKET_CODE_WSCOPE:
        code, pos = _decode_str(data, pos)
        scope, pos = _decode_object(data, pos)
        return Code(code, scope), pos
    return _SINGLES[b], pos


_SINGLES = {T.BRACKET_NULL: None, T.BRACKET_MINKEY: MinKey(), T.BRACKET_MAXKEY: MaxKey(),
            T.BRACKET_UNDEFINED: T.Undefined()}


def _decode_str(data: bytes, pos: int) -> tuple[str, int]:
    out = bytearray()
    while True:
        end = data.index(b"\x00", pos)
        out += data[pos:end]
        if data[end + 1] == 0:
            return out.decode("utf-8", "surrogatepass"), end + 2
        out.append(0)
        pos = end + 2


def _decode_object(data: bytes, pos: int) -> tuple[dict, int]:
    obj: dict[str, Any] = {}
    while data[pos] != 0:
        name, pos = _decode_str(data, pos + 1)
        obj[name], pos = _decode(data, pos)
    return obj, pos + 1


def _decode_date(data: bytes, pos: int) -> tuple[Any, int]:
    ms = _UNPACK_Q(data[pos:pos + 8])[0] - _SIGN
    try:
        return datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms), pos + 8
    except OverflowError:
        return DatetimeMS(ms), pos + 8


def _decode_number(data: bytes, pos: int) -> tuple[Any, int]:
    tag = data[pos]
    pos += 1
    if tag == NUM_NAN:
        return math.nan, pos
    if tag == NUM_NEG_INF:
        return -math.inf, pos
    if tag == NUM_POS_INF:
        return math.inf, pos
    if tag == NUM_POS_HUGE:
        mag, pos = _decode_magnitude(data, pos)
        return Decimal128(mag), pos
    if tag == NUM_NEG_HUGE:
        mag, pos = _decode_magnitude(data[:pos] + data[pos:].translate(_INVERT), pos)
        return Decimal128(mag.copy_negate()), pos
    u = _UNPACK_Q(data[pos:pos + 8])[0]
    d = _UNPACK_D(_PACK_Q(u ^ _SIGN if u & _SIGN else u ^ _ALL))[0]
    pos += 8
    rem_tag = data[pos]
    pos += 1
    if rem_tag == REM_ZERO:
        if d.is_integer() and -_SIGN <= d < _SIGN:
            return int(d), pos
        return d, pos
    if rem_tag == REM_POS:
        rem, pos = _decode_magnitude(data, pos)
    else:
        rem, pos = _decode_magnitude(data[:pos] + data[pos:].translate(_INVERT), pos)
        rem = rem.copy_negate()
    exact = _EXACT.add(decimal.Decimal(d), rem)
    if exact == exact.to_integral_value() and -_SIGN <= exact < _SIGN:
        return int(exact), pos
    return Decimal128(_EXACT.normalize(exact)), pos


def _decode_magnitude(data: bytes, pos: int) -> tuple[decimal.Decimal, int]:
    adjusted = int.from_bytes(data[pos:pos + 2], "big") - _EXP_BIAS
    end = data.index(b"\x00", pos + 2)
    digits = tuple(x - 1 for x in data[pos + 2:end])
    return decimal.Decimal((0, digits, adjusted - len(digits))), end + 1
