"""One predicate to index intervals, following mongod's IndexBoundsBuilder.

`translate(atom, field)` returns the ascending interval list of index keys that a matching
document must have on that field, and whether those intervals are exact. Exact means every key in
them satisfies the predicate, so no re-check is needed. Anything not understood gives
[MinKey, MaxKey], not exact: that is always sound.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.regex import Regex

from ..bsonutil import types as T
from ..bsonutil.compare import regex_parts
from ..bsonutil.keycodec import encode_value, hash_value
from . import intervals as I
from .intervals import Interval
from .predicates import Atom
from .regex_prefix import regex_prefix


@dataclass(frozen=True, slots=True)
class FieldInfo:
    path: str
    multikey: bool         # some prefix of the path is an array in some document
    array_above: bool      # some proper prefix is: a path through [] then keys as null
    hashed: bool
    sparse: bool
    compound: bool         # the index has more than one field


@dataclass(frozen=True, slots=True)
class Translation:
    intervals: list[Interval]
    exact: bool


FULL = Translation([I.full()], False)
NOTHING = Translation([], True)
_NOT_EXACT_BRACKETS = {T.BRACKET_ARRAY, T.BRACKET_NULL, T.BRACKET_UNDEFINED, T.BRACKET_REGEX,
                       T.BRACKET_DBPOINTER}


def translate(atom: Atom, field: FieldInfo) -> Translation:
    if any(part.isdigit() for part in field.path.split(".")):
        return FULL  # positional paths key nested arrays whole, unlike the matcher's traversal
    op = atom.op
    if field.hashed:
        return _hashed(atom)
    if op == "$eq":
        result = equality(atom.operand)
    elif op in _COMPARISONS:
        result = _COMPARISONS[op](atom.operand, field)
    else:
        handler = _OTHERS.get(op)
        result = handler(atom, field) if handler else FULL
    if atom.in_elem_match and result.exact:
        # $elemMatch needs an array; a key cannot tell whether it came from one.
        result = Translation(result.intervals, False)
    return result


# ---------------------------------------------------------------- equality and $in

def equality(value: Any) -> Translation:
    if value is None:
        return Translation([I.point(None)], False)
    if isinstance(value, (list, tuple)):
        # The array itself (nested in an outer array) or its first element / undefined if empty.
        second = I.point(value[0]) if value else I.point(T.Undefined())
        return Translation(I.union([I.point(list(value)), second]), False)
    return Translation([I.point(value)], True)


def _in(atom: Atom, field: FieldInfo) -> Translation:
    """One point per plain value, from its encoded key sorted once (O(k log k) for k values);
    arrays, null and regular expressions add their own intervals through the union."""
    values = atom.operand
    if not isinstance(values, list):
        return FULL
    others: list[Interval] = []
    exact = True
    keys: dict[bytes, Any] = {}
    for v in values:
        if v is None or isinstance(v, (list, tuple, Regex, re.Pattern)):
            t = _regex(v, regex_parts(v)[1]) if isinstance(v, (Regex, re.Pattern)) else equality(v)
            others.extend(t.intervals)
            exact = exact and t.exact
        else:
            keys.setdefault(encode_value(v), v)
    # the keys alone are sorted (bytes compare in C; sorting (key, value) pairs is 4x slower and
    # holds the interpreter lock as long), then paired with their values
    points = I.points_from_keys([(k, keys[k]) for k in sorted(keys)])
    return Translation(I.union(points + others) if others else points, exact)


def _hashed(atom: Atom) -> Translation:
    """Hashed fields answer only equality and $in on non-array values, never exactly."""
    values = [atom.operand] if atom.op == "$eq" else atom.operand if atom.op == "$in" else None
    if not isinstance(values, list) or atom.in_elem_match:
        return FULL
    if any(isinstance(v, (list, tuple, Regex, re.Pattern)) for v in values):
        return FULL
    return Translation(I.union(I.point(Int64(hash_value(v))) for v in values), False)


# ---------------------------------------------------------------- comparisons

def _is_nan(v: Any) -> bool:
    return T.is_nan(v) if T.bracket(v) == T.BRACKET_NUMBER else False


def _inequality_exact(value: Any) -> bool:
    return T.bracket(value) not in _NOT_EXACT_BRACKETS


def _lt(value: Any, field: FieldInfo, inclusive: bool = False) -> Translation:
    b = T.bracket(value)
    if b == T.BRACKET_MAXKEY:
        if inclusive:
            return Translation([I.full()], True)
        return Translation([I.make(MinKey(), True, MaxKey(), field.multikey)], not field.multikey)
    if _is_nan(value):
        return Translation([I.point(value)], True) if inclusive else NOTHING
    if b == T.BRACKET_NULL and inclusive:
        return equality(None)
    if b == T.BRACKET_ARRAY:
        return Translation([I.make(MinKey(), True, _lt_array_high(value), True)], False)
    low = I.Bound.of(-math.inf) if b == T.BRACKET_NUMBER else I.min_for_bracket(b)
    iv = I.Interval(low, T.bracket(low.value) == b if not isinstance(low.value, I.TypeEdge) else True,
                    I.Bound.of(value), inclusive)
    if iv.is_empty():
        return NOTHING
    return Translation([iv], _inequality_exact(value))


def _gt(value: Any, field: FieldInfo, inclusive: bool = False) -> Translation:
    b = T.bracket(value)
    if b == T.BRACKET_MINKEY:
        if inclusive:
            return Translation([I.full()], True)
        return Translation([I.make(MinKey(), field.multikey, MaxKey(), True)], not field.multikey)
    if _is_nan(value):
        return Translation([I.point(value)], True) if inclusive else NOTHING
    if b == T.BRACKET_NULL and inclusive:
        return equality(None)
    if b == T.BRACKET_ARRAY:
        return Translation([I.make(_gt_array_low(value), True, MaxKey(), True)], False)
    if b == T.BRACKET_NUMBER:
        high, high_inclusive = I.Bound.of(math.inf), True
    else:
        high, high_inclusive = I.max_for_bracket(b)
    iv = I.Interval(I.Bound.of(value), inclusive, high, high_inclusive)
    if iv.is_empty():
        return NOTHING
    return Translation([iv], _inequality_exact(value))


def _lt_array_high(value: list) -> Any:
    if not value:
        return []
    return value[0] if T.bracket(value[0]) > T.BRACKET_ARRAY else list(value)


def _gt_array_low(value: list) -> Any:
    if not value:
        return MinKey()
    return value[0] if T.bracket(value[0]) < T.BRACKET_ARRAY else list(value)


_COMPARISONS = {
    "$lt": lambda v, f: _lt(v, f), "$lte": lambda v, f: _lt(v, f, True),
    "$gt": lambda v, f: _gt(v, f), "$gte": lambda v, f: _gt(v, f, True),
}


# ---------------------------------------------------------------- regex

def _regex_atom(atom: Atom, field: FieldInfo) -> Translation:
    operand = atom.operand
    if isinstance(operand, (Regex, re.Pattern)):
        pattern, flags = regex_parts(operand)
        return _regex(Regex(pattern, atom.flags or flags), atom.flags or flags)
    if not isinstance(operand, str):
        return FULL
    return _regex(Regex(operand, atom.flags), atom.flags)


def _regex(regex: Any, flags: str) -> Translation:
    pattern = regex_parts(regex)[0]
    prefix, exact = regex_prefix(pattern, flags)
    if prefix:
        strings = I.make(prefix, True, _successor(prefix), False)
    else:
        strings = I.bracket_interval(T.BRACKET_STRING)
    return Translation(I.union([strings, I.point(Regex(pattern, flags))]), exact)


def _successor(prefix: str) -> Any:
    """The least string above every string that starts with `prefix` (last character + 1)."""
    last = ord(prefix[-1])
    if last < 0x10FFFF:
        return prefix[:-1] + chr(last + 1)
    return I.min_for_bracket(T.BRACKET_OBJECT).value if len(prefix) == 1 else _successor(prefix[:-1])


# ---------------------------------------------------------------- others

def _exists(atom: Atom, field: FieldInfo) -> Translation:
    if _truthy(atom.operand):
        return Translation([I.full()], field.sparse and not field.compound)
    return Translation([I.point(None)], False)  # a sparse index cannot answer this at all


def _truthy(v: Any) -> bool:
    if isinstance(v, (int, float, Decimal128)) and not isinstance(v, bool):
        return T.to_decimal(v) != 0
    return v is not None and v is not False


def _type(atom: Atom, field: FieldInfo) -> Translation:
    codes = atom.operand if isinstance(atom.operand, list) else [atom.operand]
    brackets: list[int] = []
    exact = True
    for code in codes:
        b, e = _type_bracket(code)
        if b is None:
            return FULL
        brackets.append(b)
        exact = exact and e
    return Translation(I.union(I.bracket_interval(b) for b in brackets), exact)


_TYPE_TO_BRACKET = {
    1: T.BRACKET_NUMBER, 2: T.BRACKET_STRING, 3: T.BRACKET_OBJECT, 5: T.BRACKET_BINARY,
    6: T.BRACKET_UNDEFINED, 7: T.BRACKET_OBJECTID, 8: T.BRACKET_BOOL, 9: T.BRACKET_DATE,
    10: T.BRACKET_NULL, 11: T.BRACKET_REGEX, 12: T.BRACKET_DBPOINTER, 13: T.BRACKET_CODE,
    14: T.BRACKET_STRING, 15: T.BRACKET_CODE_WSCOPE, 16: T.BRACKET_NUMBER, 17: T.BRACKET_TIMESTAMP,
    18: T.BRACKET_NUMBER, 19: T.BRACKET_NUMBER, -1: T.BRACKET_MINKEY, 127: T.BRACKET_MAXKEY,
}


def _type_bracket(code: Any) -> tuple[int | None, bool]:
    """(bracket, exact) for one $type code; None when the index cannot help (arrays, bad codes)."""
    if code == "number":
        return T.BRACKET_NUMBER, True
    if isinstance(code, str):
        code = T.TYPE_ALIASES.get(code)
    if isinstance(code, float) and code.is_integer():
        code = int(code)
    if not isinstance(code, int) or isinstance(code, bool) or code not in _TYPE_TO_BRACKET:
        return None, False
    # One numeric type, or strings without symbols, share a bracket with others; null and
    # undefined are keyed like missing fields and empty arrays.
    exact = code not in (1, 16, 18, 19, 2, 14, 6, 10)
    return _TYPE_TO_BRACKET[code], exact


def _mod(atom: Atom, field: FieldInfo) -> Translation:
    return Translation([I.bracket_interval(T.BRACKET_NUMBER)], False)


def _negation(atom: Atom, field: FieldInfo) -> Translation:
    """$ne, $nin and $not of one comparison: the complement, exact only off multikey paths."""
    op, operand = atom.op, atom.operand
    if op == "$ne":
        inner = None if isinstance(operand, (list, tuple, Regex, re.Pattern)) else equality(operand)
    elif op == "$nin":
        ok = isinstance(operand, list) and not any(isinstance(v, (list, tuple, Regex, re.Pattern)) for v in operand)
        inner = _in(atom, field) if ok else None
    elif isinstance(operand, dict) and list(operand) == ["$exists"]:
        # {$not: {$exists: true}} is {$exists: false} and the other way round.
        return _exists(Atom(atom.path, "$exists", not _truthy(operand["$exists"]), atom.scopes), field)
    else:
        inner = _not_child(operand, field)
    if inner is None:
        return FULL
    about_null = _is_null_test(op, operand)
    if not inner.exact and not about_null:
        return FULL
    result = I.complement(inner.intervals)
    if field.array_above and not any(I.contains(iv, I.NULL.key) for iv in result):
        # {a: []} keys "a.b" as null yet has no null "a.b": the null key cannot be skipped.
        return FULL
    return Translation(result, not field.multikey)


def _not_child(spec: Any, field: FieldInfo) -> Translation | None:
    if not isinstance(spec, dict) or len(spec) != 1:
        return None  # $not of a regex, or of several operators, is not indexed
    (op, operand), = spec.items()
    if op == "$eq":
        return None if isinstance(operand, (list, tuple, Regex, re.Pattern)) else equality(operand)
    if op in _COMPARISONS:
        return _COMPARISONS[op](operand, field)
    if op == "$in":
        ok = isinstance(operand, list) and not any(isinstance(v, (list, tuple, Regex, re.Pattern)) for v in operand)
        return _in(Atom(field.path, "$in", operand, ()), field) if ok else None
    return None


def _is_null_test(op: str, operand: Any) -> bool:
    """$ne: null and friends: the complement of [null, null] is exact although null is not."""
    if op == "$ne":
        return operand is None
    if op == "$nin":
        return isinstance(operand, list) and None in operand
    if isinstance(operand, dict) and len(operand) == 1:
        (inner_op, value), = operand.items()
        if inner_op in ("$eq", "$gte", "$lte"):
            return value is None
        if inner_op == "$in":
            return isinstance(value, list) and None in value
    return False


_OTHERS = {
    "$in": _in, "$regex": _regex_atom, "$exists": _exists, "$type": _type, "$mod": _mod,
    "$ne": _negation, "$nin": _negation, "$not": _negation,
}
