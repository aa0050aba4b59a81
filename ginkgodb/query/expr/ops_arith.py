"""Arithmetic operators with mongod's type promotion: int -> long -> double -> decimal.

Integer results stay in the narrowest width that holds them (int, then long) and fall back to
double only on long overflow; any double makes a double, any decimal a decimal.
"""
from __future__ import annotations

import decimal
import math
from collections.abc import Callable
from typing import Any

from bson.decimal128 import Decimal128
from bson.int64 import Int64

from ginkgodb.bsonutil.compare import date_millis
from ginkgodb.errors import CommandError, ErrorCode

from .compiler import Fn, nary
from .dates import from_millis, is_date
from .operands import numeric_unary
from .values import (
    DEC_CTX,
    DECIMAL,
    DOUBLE,
    INT,
    INT64_MAX,
    INT64_MIN,
    LONG,
    as_int32,
    fsum,
    int_or_long,
    make_dec,
    make_int,
    nullish,
    num_kind,
    number_str,
    to_dec,
    to_double,
    type_name,
)


def round_half_away(x: float) -> int:
    """C's llround: halves round away from zero."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def _overflow_date(name: str) -> CommandError:
    return CommandError(ErrorCode.Overflow, f"date overflow in {name}")


# ---- $add / $multiply -------------------------------------------------------------------


def add_values(values: list[Any]) -> Any:
    kind, isum, floats, dsum, date = INT, 0, [], None, None
    saw_int = False
    for v in values:
        k = num_kind(v)
        if k == INT or k == LONG:
            isum += v
            saw_int = True
            kind = max(kind, k)
        elif k == DOUBLE:
            floats.append(v)
            kind = max(kind, k)
        elif k == DECIMAL:
            d = v.to_decimal()
            dsum = d if dsum is None else DEC_CTX.add(dsum, d)
            kind = DECIMAL
        elif is_date(v):
            if date is not None:
                raise CommandError(ErrorCode.AddMultipleDates,
                                   "only one date allowed in an $add expression")
            date = date_millis(v)
        elif nullish(v):
            return None
        else:
            raise CommandError(ErrorCode.TypeMismatch, "$add only supports numeric or date types, "
                                                       f"not {type_name(v)}")
    if date is not None:
        return _date_plus(date, isum, floats, dsum)
    if kind == DECIMAL:
        total = dsum
        if saw_int or floats:
            rest = float(isum) + fsum(floats) if floats else isum
            total = DEC_CTX.add(total, to_dec(rest))
        return make_dec(total)
    if kind == DOUBLE:
        return fsum([*floats, isum]) if isum else fsum(floats)
    return make_int(isum, kind)


def _date_plus(date: int, isum: int, floats: list[float], dsum: Any) -> Any:
    if dsum is not None:
        if not dsum.is_finite():
            raise _overflow_date("$add")
        total = dsum + isum + date + decimal.Decimal(fsum(floats))
        return from_millis(int(total.to_integral_value(decimal.ROUND_HALF_EVEN)))
    total: Any = date + isum
    if floats:
        part = fsum(floats)
        if not math.isfinite(part):
            raise _overflow_date("$add")
        total += round_half_away(part)
    if not INT64_MIN <= total <= INT64_MAX:
        raise _overflow_date("$add")
    return from_millis(int(total))


@nary("$add")
def _add(args: list[Fn]) -> Fn:
    if len(args) == 2:
        a, b = args

        def ev2(doc: Any, vars: Any) -> Any:
            x, y = a(doc, vars), b(doc, vars)
            if type(x) is int and type(y) is int:
                return make_int(x + y, INT)
            if type(x) is float and type(y) is float:
                return x + y
            return add_values([x, y])
        return ev2
    return lambda doc, vars: add_values([fn(doc, vars) for fn in args])


def multiply_values(values: list[Any]) -> Any:
    kind = INT
    for v in values:
        k = num_kind(v)
        if k < 0:
            if nullish(v):
                return None
            raise CommandError(ErrorCode.TypeMismatch, "$multiply only supports numeric types, not "
                                                       f"{type_name(v)}")
        if k > kind:
            kind = k
    if kind == DECIMAL:
        dprod = decimal.Decimal(1)
        for v in values:
            dprod = DEC_CTX.multiply(dprod, to_dec(v))
        return make_dec(dprod)
    if kind == DOUBLE:
        fprod = 1.0
        for v in values:
            fprod *= float(v)
        return fprod
    iprod = 1
    for v in values:
        iprod *= v
    return make_int(iprod, kind)


@nary("$multiply")
def _multiply(args: list[Fn]) -> Fn:
    if len(args) == 2:
        a, b = args

        def ev2(doc: Any, vars: Any) -> Any:
            x, y = a(doc, vars), b(doc, vars)
            tx, ty = type(x), type(y)
            if tx is float:
                if ty is float or ty is int:
                    return x * y
            elif tx is int:
                if ty is int:
                    return make_int(x * y, INT if -2147483648 <= x <= 2147483647 and
                                    -2147483648 <= y <= 2147483647 else LONG)
                if ty is float:
                    return x * y
            return multiply_values([x, y])
        return ev2
    return lambda doc, vars: multiply_values([fn(doc, vars) for fn in args])


# ---- $subtract / $divide / $mod -----------------------------------------------------------


def subtract_values(a: Any, b: Any) -> Any:
    ka, kb = num_kind(a), num_kind(b)
    if ka >= 0 and kb >= 0:
        kind = max(ka, kb)
        if kind == DECIMAL:
            return make_dec(DEC_CTX.subtract(to_dec(a), to_dec(b)))
        if kind == DOUBLE:
            return float(a) - float(b)
        return make_int(int(a) - int(b), kind)
    if nullish(a) or nullish(b):
        return None
    if is_date(a):
        if is_date(b):
            return Int64(date_millis(a) - date_millis(b))
        if kb >= 0:
            return from_millis(date_millis(a) - _round_to_long(b))
        raise CommandError(ErrorCode.TypeMismatch, f"cant $subtract a {type_name(b)} from a Date")
    raise CommandError(ErrorCode.TypeMismatch, f"cant $subtract a {type_name(b)} from a "
                                               f"{type_name(a)}")


def _round_to_long(v: Any) -> int:
    if type(v) is float:
        if not math.isfinite(v):
            raise _overflow_date("$subtract")
        return round_half_away(v)
    if type(v) is Decimal128:
        d = v.to_decimal()
        if not d.is_finite():
            raise _overflow_date("$subtract")
        return int(d.to_integral_value(decimal.ROUND_HALF_EVEN))
    return int(v)


@nary("$subtract", 2, 2)
def _subtract(args: list[Fn]) -> Fn:
    a, b = args
    return lambda doc, vars: subtract_values(a(doc, vars), b(doc, vars))


def divide_values(a: Any, b: Any) -> Any:
    ka, kb = num_kind(a), num_kind(b)
    if ka >= 0 and kb >= 0:
        if ka == DECIMAL or kb == DECIMAL:
            db = to_dec(b)
            if db.is_zero():
                raise CommandError(ErrorCode.BadValue, "can't $divide by zero")
            return make_dec(DEC_CTX.divide(to_dec(a), db))
        denom = float(b)
        if denom == 0:
            raise CommandError(ErrorCode.BadValue, "can't $divide by zero")
        return float(a) / denom
    if nullish(a) or nullish(b):
        return None
    raise CommandError(ErrorCode.TypeMismatch, "$divide only supports numeric types, not "
                                               f"{type_name(a)} and {type_name(b)}")


@nary("$divide", 2, 2)
def _divide(args: list[Fn]) -> Fn:
    a, b = args
    return lambda doc, vars: divide_values(a(doc, vars), b(doc, vars))


def mod_values(a: Any, b: Any) -> Any:
    ka, kb = num_kind(a), num_kind(b)
    if ka >= 0 and kb >= 0:
        if ka == DECIMAL or kb == DECIMAL:
            db = to_dec(b)
            if db.is_zero():
                raise CommandError(ErrorCode.ModDecimalByZero, "can't $mod by zero")
            return make_dec(exact_remainder(to_dec(a), db))
        if float(b) == 0:
            raise CommandError(ErrorCode.ModByZero, "can't $mod by zero")
        if ka == DOUBLE or kb == DOUBLE:
            x, y = float(a), float(b)
            return math.fmod(x, y) if math.isfinite(x) else math.nan
        left, right = int(a), int(b)
        r = abs(left) % abs(right)
        r = -r if left < 0 else r
        return Int64(r) if LONG in (ka, kb) else int(r)
    if nullish(a) or nullish(b):
        return None
    raise CommandError(ErrorCode.ModNonNumeric,
                       f"$mod only supports numeric types, not {type_name(a)} and "
                       f"{type_name(b)}")


def exact_remainder(a: decimal.Decimal, b: decimal.Decimal) -> decimal.Decimal:
    """a mod b with the sign of a, exact whatever the exponents (decimal's remainder is not)."""
    if not a.is_finite() or b.is_nan():
        return decimal.Decimal("NaN")
    if b.is_infinite():
        return a
    ctx = decimal.Context(prec=13000, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
    return ctx.remainder(a, b)


@nary("$mod", 2, 2)
def _mod(args: list[Fn]) -> Fn:
    a, b = args
    return lambda doc, vars: mod_values(a(doc, vars), b(doc, vars))


# ---- one-argument numeric functions -------------------------------------------------------


def _abs(v: Any, k: int) -> Any:
    if k == DOUBLE:
        return abs(v)
    if k == DECIMAL:
        return Decimal128(DEC_CTX.abs(v.to_decimal()))
    if v == INT64_MIN:
        raise CommandError(ErrorCode.AbsOfLongMin, "can't take $abs of long long min")
    return Int64(abs(v)) if k == LONG else int_or_long(abs(v))


def _rounder(double_fn: Callable[[float], float], mode: str) -> Callable[[Any, int], Any]:
    def compute(v: Any, k: int) -> Any:
        if k == DOUBLE:
            if not math.isfinite(v):
                return v
            r = float(double_fn(v))
            return math.copysign(0.0, v) if r == 0 else r
        if k == DECIMAL:
            d = v.to_decimal()
            if d.is_nan():
                return v
            return Decimal128(d.quantize(decimal.Decimal(1), mode, DEC_CTX)
                              if d.is_finite() else decimal.Decimal("NaN"))
        return v
    return compute


def _decimal_or_double(name: str, dec_fn: Callable[[decimal.Decimal], decimal.Decimal],
                       dbl_fn: Callable[[float], float], valid: Callable[[Any], bool],
                       code: ErrorCode, message: str) -> Callable[[Any, int], Any]:
    def compute(v: Any, k: int) -> Any:
        if k == DECIMAL:
            d = v.to_decimal()
            if d.is_nan():
                return math.nan if name in ("$ln", "$log10") else v
            if not valid(d):
                raise CommandError(code, message.format(str(v)))
            return make_dec(dec_fn(d))
        x = float(v)
        if not math.isnan(x) and not valid(x):
            raise CommandError(code, message.format(number_str(v)))
        return dbl_fn(x)
    return compute


def _safe_exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


numeric_unary("$abs", _abs)
numeric_unary("$ceil", _rounder(math.ceil, decimal.ROUND_CEILING))
numeric_unary("$floor", _rounder(math.floor, decimal.ROUND_FLOOR))
numeric_unary("$sqrt", _decimal_or_double(
    "$sqrt", lambda d: d.sqrt(DEC_CTX), lambda x: math.sqrt(x) if x != math.inf else x,
    lambda x: x >= 0, ErrorCode.SqrtOfNegative, "$sqrt's argument must be greater than or equal to 0"))
numeric_unary("$exp", _decimal_or_double(
    "$exp", lambda d: d.exp(DEC_CTX), _safe_exp, lambda x: True, ErrorCode.InternalError, ""))
numeric_unary("$ln", _decimal_or_double(
    "$ln", lambda d: d.ln(DEC_CTX), lambda x: math.log(x) if x != math.inf else x,
    lambda x: x > 0, ErrorCode.LnArgNotPositive, "$ln's argument must be a positive number, but is {}"))
numeric_unary("$log10", _decimal_or_double(
    "$log10", lambda d: d.log10(DEC_CTX), lambda x: math.log10(x) if x != math.inf else x,
    lambda x: x > 0, ErrorCode.Log10ArgNotPositive,
    "$log10's argument must be a positive number, but is {}"))


# ---- $log / $pow --------------------------------------------------------------------------


@nary("$log", 2, 2)
def _log(args: list[Fn]) -> Fn:
    a, b = args
    return lambda doc, vars: log_values(a(doc, vars), b(doc, vars))


def log_values(x: Any, base: Any) -> Any:
    if nullish(x) or nullish(base):
        return None
    kx, kb = num_kind(x), num_kind(base)
    if kx < 0:
        raise CommandError(ErrorCode.LogArgNotNumeric,
                           f"$log's argument must be numeric, not {type_name(x)}")
    if kb < 0:
        raise CommandError(ErrorCode.LogBaseNotNumeric,
                           f"$log's base must be numeric, not {type_name(base)}")
    if DECIMAL in (kx, kb):
        dx, db = to_dec(x), to_dec(base)
        if dx.is_nan() or db.is_nan():
            return math.nan
        if not dx > 0:
            raise CommandError(ErrorCode.LogArgNotPositive,
                               f"$log's argument must be a positive number, but is {dx}")
        if not (db > 0 and db != 1):
            raise CommandError(ErrorCode.LogBaseInvalid,
                               "$log's base must be a positive number not equal to 1, "
                               f"but is {db}")
        return make_dec(DEC_CTX.divide(dx.ln(DEC_CTX), db.ln(DEC_CTX)))
    fx, fb = float(x), float(base)
    if not (fx > 0 or math.isnan(fx)):
        raise CommandError(ErrorCode.LogArgNotPositive,
                           f"$log's argument must be a positive number, but is "
                           f"{number_str(x)}")
    if not ((fb > 0 and fb != 1) or math.isnan(fb)):
        raise CommandError(ErrorCode.LogBaseInvalid,
                           "$log's base must be a positive number not equal to 1, but is "
                           f"{number_str(base)}")
    if math.isnan(fx) or math.isnan(fb):
        return math.nan
    return math.log(fx) / math.log(fb)


@nary("$pow", 2, 2)
def _pow(args: list[Fn]) -> Fn:
    a, b = args
    return lambda doc, vars: pow_values(a(doc, vars), b(doc, vars))


def pow_values(base: Any, exp: Any) -> Any:
    if nullish(base) or nullish(exp):
        return None
    kb, ke = num_kind(base), num_kind(exp)
    if kb < 0:
        raise CommandError(ErrorCode.PowBaseNotNumeric,
                           f"$pow's base must be numeric, not {type_name(base)}")
    if ke < 0:
        raise CommandError(ErrorCode.PowExponentNotNumeric,
                           f"$pow's exponent must be numeric, not {type_name(exp)}")
    if to_double(base) == 0 and to_double(exp) < 0:
        raise CommandError(ErrorCode.PowZeroToNegative,
                           "$pow cannot take a base of 0 and a negative exponent")
    if DECIMAL in (kb, ke):
        return decimal_pow(to_dec(base), to_dec(exp))
    if DOUBLE in (kb, ke):
        return _float_pow(float(base), float(exp))
    return _int_pow(int(base), int(exp), max(kb, ke))


def decimal_pow(b: decimal.Decimal, e: decimal.Decimal) -> Decimal128:
    """Decimal power as mongod reports it: full 34-digit coefficients, unsigned zero."""
    if b.is_nan() or e.is_nan():
        return Decimal128("NaN")
    if b.is_zero():
        return Decimal128("0E-6176") if e > 0 else Decimal128("1")
    try:
        r = DEC_CTX.power(b, e)
    except decimal.InvalidOperation:
        return Decimal128("NaN")
    if r.is_zero() and r.is_finite():
        return Decimal128("0E-6176")
    if r.is_finite() and r.adjusted() - 33 < r.as_tuple().exponent:
        r = DEC_CTX.quantize(r, decimal.Decimal(1).scaleb(r.adjusted() - 33))
    return make_dec(r)


def _float_pow(b: float, e: float) -> float:
    try:
        return math.pow(b, e)
    except OverflowError:
        return math.inf if b > 0 or float(e).is_integer() and int(e) % 2 == 0 else -math.inf
    except ValueError:
        return math.nan


def _int_pow(b: int, e: int, kind: int) -> Any:
    if e < 0:
        if b == 1:
            return make_int(1, kind)
        if b == -1:
            return make_int(1 if e % 2 == 0 else -1, kind)
        return math.pow(b, e)
    if abs(b) >= 2 and e > 64:
        return _float_pow(float(b), float(e))
    r = b ** e
    if INT64_MIN <= r <= INT64_MAX:
        return make_int(r, kind)
    return _float_pow(float(b), float(e))


# ---- $round / $trunc ----------------------------------------------------------------------


def _round_op(name: str, mode: str) -> None:
    @nary(name, 1, 2)
    def build(args: list[Fn]) -> Fn:
        num = args[0]
        place = args[1] if len(args) > 1 else None

        def ev(doc: Any, vars: Any) -> Any:
            v = num(doc, vars)
            if nullish(v):
                return None
            k = num_kind(v)
            if k < 0:
                raise CommandError(ErrorCode.RoundNonNumeric,
                                   f"{name} only supports numeric types, not "
                                   f"{type_name(v)}")
            precision = 0
            if place is not None:
                p = place(doc, vars)
                if nullish(p):
                    return None
                precision = _precision(name, p)
            return round_number(v, k, precision, mode)
        return ev


def _precision(name: str, p: Any) -> int:
    k = num_kind(p)
    if k < 0:
        raise CommandError(ErrorCode.CannotConvertToLong,
                           f"can't convert from BSON type {type_name(p)} to long")
    if k == DOUBLE and not math.isfinite(p):
        raise CommandError(ErrorCode.CannotCoerceToLong,
                           f"Can't coerce out of range value {number_str(p)} to long")
    i = as_int32(p)
    if i is None:
        raise CommandError(ErrorCode.RoundPrecisionNotIntegral,
                           f"precision argument to  {name} must be a integral value")
    if not -20 <= i <= 100:
        raise CommandError(ErrorCode.RoundPrecisionOutOfRange,
                           f"cannot apply {name} with precision value {i} value must be "
                           "in [-20, 100]")
    return i


def round_number(v: Any, k: int, precision: int, mode: str) -> Any:
    quantum = decimal.Decimal(1).scaleb(-precision)
    if k == INT or k == LONG:
        if precision >= 0:
            return v
        out = int(decimal.Decimal(int(v)).quantize(quantum, mode))
        if not INT64_MIN <= out <= INT64_MAX:
            raise CommandError(ErrorCode.RoundDecimalConversionFailed,
                               "invalid conversion from Decimal128 result in "
                               f"{'$round' if mode == decimal.ROUND_HALF_EVEN else '$trunc'}"
                               f" resulting from arguments: [{v}, {precision}]")
        return Int64(out) if k == LONG else int_or_long(out)
    d = v.to_decimal() if k == DECIMAL else DEC_CTX.create_decimal(decimal.Decimal(v)) \
        if math.isfinite(v) else None
    if d is None or not d.is_finite():
        return v
    q = d.quantize(quantum, mode, DEC_CTX)
    if q.is_nan():
        return v
    return make_dec(q) if k == DECIMAL else float(q)


_round_op("$round", decimal.ROUND_HALF_EVEN)
_round_op("$trunc", decimal.ROUND_DOWN)
