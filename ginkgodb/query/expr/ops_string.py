"""String operators. Byte offsets are UTF-8 offsets; case mapping is ASCII-only, as in mongod."""
from __future__ import annotations

from typing import Any

from bson.code import Code
from bson.decimal128 import Decimal128
from bson.timestamp import Timestamp

from ginkgodb.errors import CommandError, ErrorCode

from .compiler import Fn, Scope, compile_node, nary, operator
from .dates import is_date
from .memory import check_string
from .operands import all_operands, is_str, unary
from .values import DOUBLE, as_int32, nullish, num_kind, number_str, to_double, type_name

_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def coerce_to_string(v: Any) -> str:
    """mongod's Value::coerceToString: null/missing become '', numbers and dates print."""
    if type(v) is str:
        return v
    if nullish(v):
        return ""
    k = num_kind(v)
    if k >= 0:
        if k == DOUBLE:
            return _format_g(v)
        return str(v) if type(v) is Decimal128 else str(int(v))
    if is_date(v):
        from .ops_convert import format_date
        return format_date(v)
    if type(v) is Timestamp:
        import datetime
        t = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=v.time)
        return f"{t.strftime('%b')} {t.day:2d} {t:%H:%M:%S}:{v.inc}"
    if type(v) is Code and v.scope is None:
        return str(v)
    raise CommandError(ErrorCode.CannotConvertToString,
                       f"can't convert from BSON type {type_name(v)} to String")


def _coerce_long(v: Any) -> int:
    """mongod's coerceToLong for substring bounds: truncates, rejects NaN/inf/out of range."""
    if type(v) is int or type(v).__name__ == "Int64":
        return int(v)
    x = to_double(v)
    if x != x or not -9.2233720368547758e18 <= x < 9.2233720368547758e18:
        raise CommandError(ErrorCode.CannotCoerceToLong,
                           f"Can't coerce out of range value {number_str(v)} to long")
    return int(x)


def _format_g(x: float) -> str:
    """A double as mongod's coerceToString prints it: 6 significant digits, C++ stream style."""
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return format(x, ".6g")


@nary("$concat")
def _concat(args: list[Fn]) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        parts = all_operands((fn(doc, vars) for fn in args), is_str, ErrorCode.ConcatNonString,
                             "$concat only supports strings, not ")
        return None if parts is None else check_string("".join(parts))
    return ev


@nary("$toLower", 1, 1)
def _to_lower(args: list[Fn]) -> Fn:
    (arg,) = args
    return lambda doc, vars: coerce_to_string(arg(doc, vars)).translate(_LOWER)


@nary("$toUpper", 1, 1)
def _to_upper(args: list[Fn]) -> Fn:
    (arg,) = args
    return lambda doc, vars: coerce_to_string(arg(doc, vars)).translate(_UPPER)


@nary("$strcasecmp", 2, 2)
def _strcasecmp(args: list[Fn]) -> Fn:
    a, b = args

    def ev(doc: Any, vars: Any) -> Any:
        x = coerce_to_string(a(doc, vars)).translate(_UPPER)
        y = coerce_to_string(b(doc, vars)).translate(_UPPER)
        x8, y8 = x.encode(), y.encode()
        return (x8 > y8) - (x8 < y8)
    return ev


@unary("$strLenBytes", is_str, ErrorCode.StrLenBytesArgNotString,
       "$strLenBytes requires a string argument, found: ", null_to_null=False)
def _strlen_bytes(v: str) -> int:
    return len(v) if v.isascii() else len(v.encode())


unary("$strLenCP", is_str, ErrorCode.StrLenCPArgNotString, "$strLenCP requires a string argument, found: ",
      null_to_null=False)(len)


# ---- substrings ----------------------------------------------------------------------------


def _substr_bytes(args: list[Fn]) -> Fn:
    s_fn, start_fn, len_fn = args

    def ev(doc: Any, vars: Any) -> Any:
        s = coerce_to_string(s_fn(doc, vars))
        start, length = start_fn(doc, vars), len_fn(doc, vars)
        if num_kind(start) < 0:
            raise CommandError(ErrorCode.SubstrBytesStartNotNumeric,
                               "$substrBytes: starting index must be a numeric type (is "
                               f"BSON type {type_name(start)})")
        if num_kind(length) < 0:
            raise CommandError(ErrorCode.SubstrBytesLengthNotNumeric,
                               "$substrBytes: length must be a numeric type (is BSON type "
                               f"{type_name(length)})")
        lo, n = _coerce_long(start), _coerce_long(length)
        if lo < 0:
            raise CommandError(ErrorCode.SubstrBytesStartNegative,
                               f"$substrBytes: starting index must be non-negative "
                               f"(got: {lo})")
        data = s.encode()
        if lo >= len(data):
            return ""
        hi = len(data) if n < 0 else min(len(data), lo + n)
        if lo < len(data) and (data[lo] & 0xC0) == 0x80:
            raise CommandError(ErrorCode.SubstrBytesStartInUtf8Char,
                               "$substrBytes:  Invalid range, starting index is a UTF-8 "
                               "continuation byte.")
        if hi < len(data) and (data[hi] & 0xC0) == 0x80:
            raise CommandError(ErrorCode.SubstrBytesEndInUtf8Char,
                               "$substrBytes:  Invalid range, ending index is in the "
                               "middle of a UTF-8 character.")
        return data[lo:hi].decode()
    return ev


nary("$substrBytes", 3, 3)(_substr_bytes)
nary("$substr", 3, 3)(_substr_bytes)


@nary("$substrCP", 3, 3)
def _substr_cp(args: list[Fn]) -> Fn:
    s_fn, start_fn, len_fn = args

    def ev(doc: Any, vars: Any) -> Any:
        s = coerce_to_string(s_fn(doc, vars))
        start, length = start_fn(doc, vars), len_fn(doc, vars)
        if num_kind(start) < 0:
            raise CommandError(ErrorCode.SubstrCPStartNotNumeric,
                               "$substrCP: starting index must be a numeric type (is BSON "
                               f"type {type_name(start)})")
        lo = as_int32(start)
        if lo is None:
            raise CommandError(ErrorCode.SubstrCPStartNotInt32,
                               "$substrCP: starting index cannot be represented as a "
                               f"32-bit integral value: {number_str(start)}")
        if num_kind(length) < 0:
            raise CommandError(ErrorCode.SubstrCPLengthNotNumeric,
                               "$substrCP: length must be a numeric type (is BSON type "
                               f"{type_name(length)})")
        n = as_int32(length)
        if n is None:
            raise CommandError(ErrorCode.SubstrCPLengthNotInt32,
                               "$substrCP: length cannot be represented as a 32-bit "
                               f"integral value: {number_str(length)}")
        if n < 0:
            raise CommandError(ErrorCode.SubstrCPLengthNegative,
                               "$substrCP: length must be a nonnegative integer.")
        if lo < 0:
            raise CommandError(ErrorCode.SubstrCPStartNegative,
                               "$substrCP: the starting index must be nonnegative "
                               "integer.")
        return s[lo:lo + n]
    return ev


# ---- split / indexOf -----------------------------------------------------------------------


@nary("$split", 2, 2)
def _split(args: list[Fn]) -> Fn:
    s_fn, sep_fn = args

    def ev(doc: Any, vars: Any) -> Any:
        s, sep = s_fn(doc, vars), sep_fn(doc, vars)
        if nullish(s) or nullish(sep):
            return None
        if type(s) is not str:
            raise CommandError(ErrorCode.SplitFirstArgNotString,
                               "$split requires an expression that evaluates to a string "
                               f"as a first argument, found: {type_name(s)}")
        if type(sep) is not str:
            raise CommandError(ErrorCode.SplitSecondArgNotString,
                               "$split requires an expression that evaluates to a string "
                               f"as a second argument, found: {type_name(sep)}")
        if not sep:
            raise CommandError(ErrorCode.SplitEmptySeparator,
                               "$split requires a non-empty separator")
        return s.split(sep)
    return ev


def _index_of(name: str, codes: tuple[ErrorCode, ErrorCode], by_bytes: bool) -> None:
    @nary(name, 2, 4)
    def build(args: list[Fn]) -> Fn:
        def ev(doc: Any, vars: Any) -> Any:
            s = args[0](doc, vars)
            if nullish(s):
                return None
            if type(s) is not str:
                raise CommandError(codes[0], f"{name} requires a string as the first argument, "
                                             f"found: {type_name(s)}")
            sub = args[1](doc, vars)
            if type(sub) is not str:
                raise CommandError(codes[1], f"{name} requires a string as the second argument, "
                                             f"found: {type_name(sub)}")
            text, needle = (s.encode(), sub.encode()) if by_bytes else (s, sub)
            lo = _index_arg(name, args[2](doc, vars), "starting") if len(args) > 2 else 0
            hi = _index_arg(name, args[3](doc, vars), "ending") if len(args) > 3 else len(text)
            if lo > len(text) or lo > hi:
                return -1
            if by_bytes:
                return text.find(needle, lo, hi)
            if not text and not needle:
                return 0
            i = text.find(needle, lo)
            return i if i != -1 and i < hi else -1
        return ev


def _index_arg(name: str, v: Any, which: str) -> int:
    if as_int32(v) is None or isinstance(v, bool):
        from .values import bson_repr
        raise CommandError(ErrorCode.IndexOfIndexNotIntegral,
                           f"{name} requires an integral {which} index, found a value of "
                           f"type: {type_name(v)}, with value: {bson_repr(v)}")
    i = int(v.to_decimal()) if type(v) is Decimal128 else int(v)
    if i < 0:
        raise CommandError(ErrorCode.IndexOfIndexNegative,
                           f"{name} requires a nonnegative {which} index, found: {i}")
    return i


_index_of("$indexOfBytes", (ErrorCode.IndexOfBytesFirstArgNotString,
                            ErrorCode.IndexOfBytesSecondArgNotString), True)
_index_of("$indexOfCP", (ErrorCode.IndexOfCPFirstArgNotString,
                         ErrorCode.IndexOfCPSecondArgNotString), False)


# ---- trim ------------------------------------------------------------------------------------

_WHITESPACE = "\0 \t\n\v\f\r\u00a0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B))


def _trim(name: str, left: bool, right: bool) -> None:
    @operator(name)
    def parse(spec: Any, scope: Scope) -> Fn:
        if not isinstance(spec, dict):
            raise CommandError(ErrorCode.TrimArgNotObject,
                               f"{name} only supports an object as an argument, found: "
                               f"{type_name(spec)}")
        parts: dict[str, Fn] = {}
        for key, value in spec.items():
            if key not in ("input", "chars"):
                raise CommandError(ErrorCode.TrimUnknownArgument,
                                   f"{name} found an unknown argument: {key}")
            parts[key] = compile_node(value, scope)
        if "input" not in parts:
            raise CommandError(ErrorCode.TrimMissingInput, f"{name} requires an 'input' field")
        inp, chars_fn = parts["input"], parts.get("chars")

        def ev(doc: Any, vars: Any) -> Any:
            s = inp(doc, vars)
            if nullish(s):
                return None
            if type(s) is not str:
                raise CommandError(ErrorCode.TrimInputNotString,
                                   f"{name} requires its input to be a string, got "
                                   f"{_show(s)} (of type {type_name(s)}) instead.")
            chars = _WHITESPACE
            if chars_fn is not None:
                chars = chars_fn(doc, vars)
                if nullish(chars):
                    return None
                if type(chars) is not str:
                    raise CommandError(ErrorCode.TrimCharsNotString,
                                       f"{name} requires 'chars' to be a string, got "
                                       f"{_show(chars)} (of type {type_name(chars)}) "
                                       "instead.")
            if left and right:
                return s.strip(chars)
            return s.lstrip(chars) if left else s.rstrip(chars)
        return ev


def _show(v: Any) -> str:
    from .values import bson_repr
    return bson_repr(v)


_trim("$trim", True, True)
_trim("$ltrim", True, False)
_trim("$rtrim", False, True)


# ---- replace ---------------------------------------------------------------------------------


def _replace(name: str, count: int) -> None:
    @operator(name)
    def parse(spec: Any, scope: Scope) -> Fn:
        if not isinstance(spec, dict):
            raise CommandError(ErrorCode.ReplaceArgNotObject,
                               f"{name} requires an object as an argument, found: "
                               f"{type_name(spec)}")
        parts: dict[str, Fn] = {}
        for key, value in spec.items():
            if key not in ("input", "find", "replacement"):
                raise CommandError(ErrorCode.ReplaceUnknownArgument,
                                   f"{name} found an unknown argument: {key}")
            parts[key] = compile_node(value, scope)
        for key, code in (("input", ErrorCode.ReplaceMissingInput),
                          ("find", ErrorCode.ReplaceMissingFind),
                          ("replacement", ErrorCode.ReplaceMissingReplacement)):
            if key not in parts:
                raise CommandError(code, f"{name} requires '{key}' to be specified")
        fns = [(k, parts[k], c) for k, c in (("input", ErrorCode.ReplaceInputNotString),
                                              ("find", ErrorCode.ReplaceFindNotString),
                                              ("replacement", ErrorCode.ReplaceReplacementNotString))]

        def ev(doc: Any, vars: Any) -> Any:
            vals = []
            for key, fn, code in fns:
                v = fn(doc, vars)
                if not nullish(v) and type(v) is not str:
                    raise CommandError(code, f"{name} requires that '{key}' be a string, found: "
                                             f"{_show(v)}")
                vals.append(v)
            if any(nullish(v) for v in vals):
                return None
            s, find, repl = vals
            return check_string(s.replace(find, repl, count))
        return ev


_replace("$replaceOne", 1)
_replace("$replaceAll", -1)
