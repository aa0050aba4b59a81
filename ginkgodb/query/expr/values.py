"""Value helpers shared by every expression operator: missing, truthiness, numeric kinds.

Aggregation distinguishes a *missing* value (no such field) from null; `MISSING` is that value.
Numbers keep their BSON width: a plain `int` in int32 range is an int, `Int64` (or a plain int
outside that range) a long, `float` a double and `Decimal128` a decimal. Results are built with
`make_number` so that `$add` of two ints stays an int, as in mongod.
"""
from __future__ import annotations

import decimal
import math
from typing import Any

from bson.code import Code
from bson.decimal128 import Decimal128, create_decimal128_context
from bson.int64 import Int64

from ginkgodb.bsonutil.types import TYPE_NAMES, Undefined, bson_type


class _Missing:
    """The value of a field that does not exist; never stored, never equal to null."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
UNDEFINED = Undefined()

INT, LONG, DOUBLE, DECIMAL = 0, 1, 2, 3
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
DEC_CTX = create_decimal128_context()


def nullish(v: Any) -> bool:
    """null, missing or undefined: the values most operators turn into a null result."""
    return v is None or v is MISSING or type(v) is Undefined


def truthy(v: Any) -> bool:
    """mongod's coerceToBool: false, null, missing, undefined and numeric zero are false."""
    if v is None or v is MISSING or v is False:
        return False
    t = type(v)
    if t is int or t is float or t is Int64:
        return v != 0
    if t is bool:
        return v
    if t is Decimal128:
        return not v.to_decimal().is_zero()
    if t is Undefined:
        return False
    return True


def type_name(v: Any) -> str:
    """mongod's type name for error messages and $type ('missing' for a missing value)."""
    if v is MISSING:
        return "missing"
    if type(v) is Code:
        return "javascript" if v.scope is None else "javascriptWithScope"
    return TYPE_NAMES.get(bson_type(v), "unknown")


def num_kind(v: Any) -> int:
    """INT, LONG, DOUBLE or DECIMAL for a number; -1 for anything else (bool is not a number)."""
    t = type(v)
    if t is int:
        return INT if INT32_MIN <= v <= INT32_MAX else LONG
    if t is float:
        return DOUBLE
    if t is Int64:
        return LONG
    if t is Decimal128:
        return DECIMAL
    return -1


def make_int(value: int, kind: int) -> Any:
    """An integer result of at least `kind` width: int, long, or double on long overflow."""
    if kind == INT and INT32_MIN <= value <= INT32_MAX:
        return int(value)
    if INT64_MIN <= value <= INT64_MAX:
        return Int64(value)
    return float(value)


def int_or_long(value: int) -> Any:
    """mongod's Value::createIntOrLong."""
    if INT32_MIN <= value <= INT32_MAX:
        return int(value)
    return Int64(value)


def to_dec(v: Any) -> decimal.Decimal:
    """A number as a decimal the way mongod converts it (doubles to 15 significant digits)."""
    if type(v) is Decimal128:
        return v.to_decimal()
    if type(v) is float:
        return double_to_dec(v)
    return decimal.Decimal(int(v))


def fsum(values: list) -> float:
    """An exactly rounded float sum that degrades to inf/nan instead of raising."""
    try:
        return math.fsum(values)
    except (OverflowError, ValueError):
        total = 0.0
        for v in values:
            total += v
        return total


def double_to_dec(x: float) -> decimal.Decimal:
    """A double as mongod's $toDecimal converts it: 15 significant digits, zeros kept."""
    if math.isnan(x):
        return decimal.Decimal("NaN")
    if math.isinf(x):
        return decimal.Decimal("Infinity") if x > 0 else decimal.Decimal("-Infinity")
    if x == 0:
        return decimal.Decimal("-0") if math.copysign(1.0, x) < 0 else decimal.Decimal(0)
    return decimal.Decimal(format(x, ".14e"))


def make_dec(d: decimal.Decimal) -> Decimal128:
    """Round a Python decimal into Decimal128's 34 digits."""
    return Decimal128(DEC_CTX.create_decimal(d))


def to_double(v: Any) -> float:
    if type(v) is Decimal128:
        return float(v.to_decimal())
    return float(v)


def is_integral(v: Any) -> bool:
    """A number with no fractional part (what mongod calls integral)."""
    k = num_kind(v)
    if k == INT or k == LONG:
        return True
    if k == DOUBLE:
        return math.isfinite(v) and v == math.floor(v)
    if k == DECIMAL:
        d = v.to_decimal()
        return d.is_finite() and d == d.to_integral_value()
    return False


def as_int32(v: Any) -> int | None:
    """The value as an int32 if it is an integral number in range, else None (mongod 'integral()')."""
    if not is_integral(v):
        return None
    i = int(v.to_decimal()) if type(v) is Decimal128 else int(v)
    return i if INT32_MIN <= i <= INT32_MAX else None


def as_int64(v: Any) -> int | None:
    """The value as an int64 if it is an integral number in range, else None ('integral64Bit()')."""
    if not is_integral(v):
        return None
    i = int(v.to_decimal()) if type(v) is Decimal128 else int(v)
    return i if INT64_MIN <= i <= INT64_MAX else None


def number_str(v: Any) -> str:
    """A number as mongod prints it in error messages (doubles as C's %g)."""
    if type(v) is float:
        return format(v, "g")
    if type(v) is Decimal128:
        return str(v)
    return str(int(v))


def bson_repr(v: Any) -> str:
    """A value the way mongod's BSONObj::toString prints it inside error messages."""
    if v is MISSING:
        return "missing"
    if v is None:
        return "null"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, dict):
        if not v:
            return "{}"
        return "{ " + ", ".join(f"{k}: {bson_repr(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        if not v:
            return "[]"
        return "[ " + ", ".join(bson_repr(x) for x in v) + " ]"
    if type(v) is float:
        return number_str(v)
    if type(v) is Decimal128:
        return f'NumberDecimal("{v}")'
    if type(v) is Int64:
        return str(int(v))
    if type(v) is int:
        return str(v)
    name = type(v).__name__
    if name == "ObjectId":
        return f"ObjectId('{v}')"
    if name == "datetime":
        return f"new Date({_millis(v)})"
    return str(v)


def _millis(v: Any) -> int:
    from ginkgodb.bsonutil.compare import date_millis
    return date_millis(v)


_OBJ = object()
_ARR = object()


def hash_key(v: Any) -> Any:
    """A hashable stand-in with mongod's equality: 1, 1.0, Int64(1) and Decimal128('1') give
    equal keys, field order matters in documents. Cheap for scalars; used by $group, sets, $lookup."""
    t = type(v)
    if t is str or t is int or t is Int64:
        return v
    if t is float:
        return v if v == v else _encode(v)
    if t is dict:
        out: list[Any] = [_OBJ]
        for k, x in v.items():
            out.append(k)
            out.append(hash_key(x))
        return tuple(out)
    if t is list:
        return (_ARR, *[hash_key(x) for x in v])
    if v is None:
        return None
    if t is Decimal128:
        d = v.to_decimal()
        if d.is_finite():
            return d
        return float(d) if d.is_infinite() else _encode(v)
    return _encode(v)


def _encode(v: Any) -> bytes:
    from ginkgodb.bsonutil.keycodec import encode_value
    return encode_value(v)
