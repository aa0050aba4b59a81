"""$convert and its shorthands ($toInt, $toString, ...), with mongod's conversion table."""
from __future__ import annotations

import decimal
import math
import re
from collections.abc import Callable
from typing import Any

from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.timestamp import Timestamp

from ginkgodb.bsonutil.compare import date_millis
from ginkgodb.bsonutil.types import TYPE_ALIASES, TYPE_NAMES
from ginkgodb.errors import CommandError, ErrorCode

from .compiler import Fn, Scope, arg_list, compile_node, operator
from .dates import from_millis, is_date
from .values import (
    DECIMAL,
    DOUBLE,
    INT,
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    LONG,
    double_to_dec,
    make_dec,
    nullish,
    num_kind,
    number_str,
    type_name,
)

_SUFFIX = " in $convert with no onError value"


class ConversionFailure(CommandError):
    """A conversion error that `onError` may replace."""

    def __init__(self, msg: str) -> None:
        super().__init__(ErrorCode.ConversionFailure, msg)


def _unsupported(v: Any, target: str) -> ConversionFailure:
    return ConversionFailure(f"Unsupported conversion from {type_name(v)} to {target}{_SUFFIX}")


def _overflow(shown: str) -> ConversionFailure:
    return ConversionFailure(f"Conversion would overflow target type{_SUFFIX}: {shown}")


# ---- numbers --------------------------------------------------------------------------------


def _integral_from_float(x: float, lo: int, hi: int) -> int:
    if math.isnan(x):
        raise ConversionFailure(f"Attempt to convert NaN value to integer type{_SUFFIX}: nan")
    if math.isinf(x):
        raise ConversionFailure(f"Attempt to convert infinity value to integer type{_SUFFIX}: "
                                f"{number_str(x)}")
    if not lo <= x < hi + 1:
        raise _overflow(number_str(x))
    return int(x)


def _integral_from_decimal(v: Decimal128, lo: int, hi: int) -> int:
    d = v.to_decimal()
    if d.is_nan():
        raise ConversionFailure(f"Attempt to convert NaN value to integer type{_SUFFIX}: {v}")
    if d.is_infinite():
        raise ConversionFailure(f"Attempt to convert infinity value to integer type{_SUFFIX}: {v}")
    i = int(d.to_integral_value(decimal.ROUND_DOWN))
    if not lo <= i <= hi:
        raise _overflow(str(v))
    return i


def _to_integral(v: Any, lo: int, hi: int, target: str) -> int:
    k = num_kind(v)
    if k == INT or k == LONG:
        if not lo <= v <= hi:
            raise _overflow("")
        return int(v)
    if k == DOUBLE:
        return _integral_from_float(v, lo, hi)
    if k == DECIMAL:
        return _integral_from_decimal(v, lo, hi)
    if v is True or v is False:
        return int(v)
    if type(v) is str:
        return _parse_integer(v, lo, hi)
    if is_date(v) and target == "long":
        return date_millis(v)
    raise _unsupported(v, target)


def to_int(v: Any) -> int:
    return int(_to_integral(v, INT32_MIN, INT32_MAX, "int"))


def to_long(v: Any) -> Int64:
    return Int64(_to_integral(v, INT64_MIN, INT64_MAX, "long"))


_INT_TEXT = re.compile(r"([+-]?)([0-9]*)(.*)", re.S)


def _parse_integer(s: str, lo: int, hi: int) -> int:
    def fail(reason: str) -> ConversionFailure:
        return ConversionFailure(f"Failed to parse number '{s}'{_SUFFIX}: {reason}")
    if s.startswith("0x"):
        raise ConversionFailure(f"Illegal hexadecimal input{_SUFFIX}: {s}")
    m = _INT_TEXT.fullmatch(s)
    assert m is not None
    sign, digits, rest = m.groups()
    if not digits:
        raise fail("No digits")
    if rest:
        raise fail("Did not consume whole string.")
    value = int(digits.lstrip("0") or "0") * (-1 if sign == "-" else 1)
    if not lo <= value <= hi:
        raise fail("Overflow")
    return value


_FLOAT_TEXT = re.compile(
    r"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?|"
    r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)", re.I)


def _parse_double(s: str) -> float:
    def fail(reason: str) -> ConversionFailure:
        return ConversionFailure(f"Failed to parse number '{s}'{_SUFFIX}: {reason}")
    if s.startswith("0x"):
        raise ConversionFailure(f"Illegal hexadecimal input{_SUFFIX}: {s}")
    if not s:
        raise fail("Empty string")
    if s[0] in " \t\n\v\f\r":
        raise fail("Leading whitespace")
    m = _FLOAT_TEXT.match(s)
    if not m:
        raise fail("Did not consume any digits")
    if m.end() != len(s):
        raise fail("Did not consume whole string.")
    text = m.group(0)
    x = float.fromhex(text) if "x" in text.lower() else float(text)
    if math.isinf(x) and "inf" not in text.lower():
        raise fail("Out of range")
    if x != 0 and abs(x) < 2.2250738585072014e-308:
        raise fail("Out of range")
    return x


def to_double(v: Any) -> float:
    k = num_kind(v)
    if k == DOUBLE:
        return v
    if k == INT or k == LONG:
        return float(v)
    if k == DECIMAL:
        d = v.to_decimal()
        x = float(d)
        if math.isinf(x) and d.is_finite():
            raise _overflow(str(v))
        return x
    if v is True or v is False:
        return float(v)
    if type(v) is str:
        return _parse_double(v)
    if is_date(v):
        return float(date_millis(v))
    raise _unsupported(v, "double")


_DECIMAL_TEXT = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|"
                           r"inf(?:inity)?|nan)", re.I)


def to_decimal(v: Any) -> Decimal128:
    k = num_kind(v)
    if k == DECIMAL:
        return v
    if k == INT or k == LONG:
        return Decimal128(decimal.Decimal(int(v)))
    if k == DOUBLE:
        return make_dec(double_to_dec(v))
    if v is True or v is False:
        return Decimal128(decimal.Decimal(int(v)))
    if type(v) is str:
        try:
            if not _DECIMAL_TEXT.fullmatch(v):
                raise decimal.InvalidOperation
            d = decimal.Decimal(v)
        except decimal.InvalidOperation:
            raise ConversionFailure(f"Failed to parse number '{v}'{_SUFFIX}: Failed to parse "
                                    "string to decimal") from None
        return make_dec(d)
    if is_date(v):
        return Decimal128(decimal.Decimal(date_millis(v)))
    raise _unsupported(v, "decimal")


# ---- other targets ---------------------------------------------------------------------------


def to_bool(v: Any) -> bool:
    k = num_kind(v)
    if k == DECIMAL:
        return not v.to_decimal().is_zero()
    if k >= 0:
        return v != 0
    if v is True or v is False:
        return v
    return True


def format_double(x: float) -> str:
    """A double the way $toString prints it: shortest round-trip form, C-style exponent."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    text = repr(x)
    if text.endswith(".0"):
        text = text[:-2]
    return text


def format_date(v: Any) -> str:
    from .date_format import format_date_iso
    return format_date_iso(date_millis(v))


def to_string(v: Any) -> str:
    t = type(v)
    if t is str:
        return v
    k = num_kind(v)
    if k == DOUBLE:
        return format_double(v)
    if k == INT or k == LONG:
        return str(int(v))
    if k == DECIMAL:
        return str(v)
    if v is True or v is False:
        return "true" if v else "false"
    if t is ObjectId:
        return str(v)
    if is_date(v):
        return format_date(v)
    raise _unsupported(v, "string")


def to_object_id(v: Any) -> ObjectId:
    if type(v) is ObjectId:
        return v
    if type(v) is not str:
        raise _unsupported(v, "objectId")
    if len(v) != 24:
        raise ConversionFailure(f"Failed to parse objectId '{v}'{_SUFFIX}: Invalid string length "
                                f"for parsing to OID, expected 24 but found {len(v)}")
    for ch in v:
        if ch not in "0123456789abcdefABCDEF":
            raise ConversionFailure(f"Failed to parse objectId '{v}'{_SUFFIX}: Invalid character "
                                    f"found in hex string: {ch}")
    return ObjectId(v)


def to_date(v: Any) -> Any:
    if is_date(v):
        return v
    k = num_kind(v)
    if k == DOUBLE:
        return from_millis(_integral_from_float(v, INT64_MIN, INT64_MAX))
    if k == LONG:
        return from_millis(int(v))
    if k == DECIMAL:
        return from_millis(_integral_from_decimal(v, INT64_MIN, INT64_MAX))
    if type(v) is Timestamp:
        return from_millis(v.time * 1000)
    if type(v) is ObjectId:
        return from_millis(int.from_bytes(v.binary[:4], "big", signed=True) * 1000)
    if type(v) is str:
        from .date_format import parse_date_string
        try:
            return from_millis(parse_date_string(v, None))
        except CommandError as exc:
            raise ConversionFailure(exc.errmsg) from None
    raise _unsupported(v, "date")


CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "double": to_double, "string": to_string, "objectId": to_object_id, "bool": to_bool,
    "date": to_date, "int": to_int, "long": to_long, "decimal": to_decimal,
}


def convert(v: Any, target: str) -> Any:
    fn = CONVERTERS.get(target)
    if fn is None:
        raise _unsupported(v, target)
    return fn(v)


# ---- parsing ---------------------------------------------------------------------------------


def _target_name(to: Any) -> str:
    if type(to) is str:
        if to not in TYPE_ALIASES:
            raise CommandError(ErrorCode.BadValue, f"Unknown type name: {to}")
        return to
    if num_kind(to) >= 0:
        d = to.to_decimal() if type(to) is Decimal128 else to
        integral = math.isfinite(float(d)) and d == int(d)
        if not integral:
            raise CommandError(ErrorCode.FailedToParse,
                               "In $convert, numeric 'to' argument is not an integer")
        name = TYPE_NAMES.get(int(d))
        if name is None:
            raise CommandError(ErrorCode.FailedToParse, "In $convert, numeric value for 'to' "
                                                        f"does not correspond to a BSON type: {int(d)}")
        return name
    raise CommandError(ErrorCode.FailedToParse, "$convert's 'to' argument must be a string or "
                                                f"number, but is {type_name(to)}")


@operator("$convert")
def _convert(spec: Any, scope: Scope) -> Fn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.FailedToParse, "$convert expects an object of named "
                                                    f"arguments but found: {type_name(spec)}")
    parts: dict[str, Fn] = {}
    for key, value in spec.items():
        if key not in ("input", "to", "onError", "onNull"):
            raise CommandError(ErrorCode.FailedToParse, f"$convert found an unknown argument: {key}")
        parts[key] = compile_node(value, scope)
    for key in ("input", "to"):
        if key not in parts:
            raise CommandError(ErrorCode.FailedToParse, f"Missing '{key}' parameter to $convert")
    return _convert_fn(parts["input"], parts["to"], parts.get("onError"), parts.get("onNull"))


def _convert_fn(inp: Fn, to: Fn, on_error: Fn | None, on_null: Fn | None) -> Fn:
    fixed = _target_name(to.value) if getattr(to, "is_const", False) and \
        not nullish(to.value) else None  # type: ignore[attr-defined]

    def ev(doc: Any, vars: Any) -> Any:
        target = fixed
        if target is None:
            t = to(doc, vars)
            target = None if nullish(t) else _target_name(t)
        v = inp(doc, vars)
        if nullish(v):
            return on_null(doc, vars) if on_null is not None else None
        if target is None:
            return None
        try:
            return convert(v, target)
        except ConversionFailure:
            if on_error is None:
                raise
            return on_error(doc, vars)
    return ev


def _shorthand(name: str, target: str) -> None:
    @operator(name)
    def parse(spec: Any, scope: Scope) -> Fn:
        args = arg_list(spec)
        if len(args) != 1:
            raise CommandError(ErrorCode.ConvertShorthandArgCount,
                               f"{name} requires a single argument, got {len(args)}")
        arg = compile_node(args[0], scope)
        fn = CONVERTERS[target]

        def ev(doc: Any, vars: Any) -> Any:
            v = arg(doc, vars)
            return None if nullish(v) else fn(v)
        if getattr(arg, "is_const", False):
            return _const_of(ev)
        return ev


def _const_of(fn: Fn) -> Fn:
    from .compiler import const
    return const(fn(None, None))


for _name, _target in (("$toInt", "int"), ("$toLong", "long"), ("$toDouble", "double"),
                       ("$toDecimal", "decimal"), ("$toString", "string"), ("$toBool", "bool"),
                       ("$toObjectId", "objectId"), ("$toDate", "date")):
    _shorthand(_name, _target)
