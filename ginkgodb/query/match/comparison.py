"""$eq, $gt, $gte, $lt, $lte and $in as single-value predicates (mongod's ComparisonMatchExpression).

Values of different type brackets never compare, except: null matches missing/undefined for
$eq/$lte/$gte, and a MinKey/MaxKey operand makes $gt/$gte (resp. $lt/$lte) match everything else.
NaN equals NaN and is otherwise unordered. Common operand types get closures that compare
directly in Python (exact across int/float/Decimal); everything else goes through `compare`.
"""
from __future__ import annotations

import datetime
import decimal
import operator
from collections.abc import Callable, Mapping
from typing import Any

from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.regex import Regex

from ginkgodb.bsonutil import types as T
from ginkgodb.bsonutil.compare import compare, number_value
from ginkgodb.bsonutil.types import Undefined
from ginkgodb.errors import CommandError, ErrorCode

from .context import ParseContext, is_expression_document
from .nodes import Node, NotNode, leaf
from .regex import regex_operand, regex_predicate
from .values import MISSING, value_bracket

ElemPredicate = Callable[[Any], bool]

EQ, LT, LTE, GT, GTE = "$eq", "$lt", "$lte", "$gt", "$gte"
_ORDER = {LT: operator.lt, LTE: operator.le, GT: operator.gt, GTE: operator.ge}
_EQUALISH = frozenset({EQ, LTE, GTE})
_NULLISH = frozenset({T.BRACKET_NULL, T.BRACKET_UNDEFINED})


def comparison_predicate(op: str, rhs: Any) -> ElemPredicate:
    """The matchesSingleElement test of `{path: {op: rhs}}` (rhs already normalized)."""
    if rhs is None:
        return _null_predicate(op)
    rb = T.bracket(rhs)
    if rb == T.BRACKET_NUMBER and not isinstance(rhs, bool):
        return _number_predicate(op, rhs)
    fast = _same_type_predicate(op, rhs)
    if fast is not None:
        return fast
    return _generic_predicate(op, rhs, rb)


def _null_predicate(op: str) -> ElemPredicate:
    if op in _EQUALISH:
        return lambda v: v is None or v is MISSING or type(v) is Undefined
    return lambda v: False


def _number_predicate(op: str, rhs: Any) -> ElemPredicate:
    if T.is_nan(rhs):  # NaN: equal to NaN only; ordered comparisons false (<=/>= true for NaN itself)
        return _is_nan if op in _EQUALISH else (lambda v: False)
    r = number_value(rhs)
    if isinstance(r, decimal.Decimal) and r == r.to_integral_value() and abs(r) < 2**63:
        r = int(r)  # int compares exactly with int and float and is faster than Decimal
    cmp = operator.eq if op == EQ else _ORDER[op]

    def number_matches(v: Any) -> bool:
        t = type(v)
        if t is int or t is float or t is Int64:
            return cmp(v, r)
        if t is Decimal128:
            d = v.to_decimal()
            return False if d.is_nan() else cmp(d, r)
        return False

    return number_matches


def _is_nan(v: Any) -> bool:
    t = type(v)
    if t is float:
        return v != v
    if t is Decimal128:
        return v.to_decimal().is_nan()
    return False


_FAST_TYPES = (str, ObjectId, bool, datetime.datetime)


def _same_type_predicate(op: str, rhs: Any) -> ElemPredicate | None:
    """Direct Python comparison for types whose Python order is MongoDB's order."""
    rt = type(rhs)
    if rt not in _FAST_TYPES or (rt is datetime.datetime and rhs.tzinfo is not None):
        return None
    cmp = operator.eq if op == EQ else _ORDER[op]
    if rt is datetime.datetime:
        other_dates = _generic_predicate(op, rhs, T.BRACKET_DATE)

        def date_matches(v: Any) -> bool:
            if type(v) is rt and v.tzinfo is None:
                return cmp(v, rhs)
            return other_dates(v)

        return date_matches

    def same_type_matches(v: Any) -> bool:
        return type(v) is rt and cmp(v, rhs)

    return same_type_matches


def _generic_predicate(op: str, rhs: Any, rb: int) -> ElemPredicate:
    test = (lambda c: c == 0) if op == EQ else (lambda c, f=_ORDER[op]: f(c, 0))

    def matches(v: Any) -> bool:
        vb = value_bracket(v)
        if vb != rb:
            return cross_bracket_result(op, vb, rb)
        return test(compare(v, rhs))

    return matches


def cross_bracket_result(op: str, vb: int, rb: int) -> bool:
    """mongod's answer when the value and the operand are in different type brackets."""
    if vb in _NULLISH and rb in _NULLISH:
        return op in _EQUALISH
    if rb == T.BRACKET_MAXKEY:
        return op in (LT, LTE)
    if rb == T.BRACKET_MINKEY:
        return op in (GT, GTE)
    return False


def equality_predicate(rhs: Any) -> ElemPredicate:
    return comparison_predicate(EQ, rhs)


_HASHED_TYPES = (str, ObjectId, bool, datetime.datetime)


def in_predicate(values: list[Any], regexes: list[ElemPredicate]) -> ElemPredicate:
    """$in: equal to one of `values` (null also matches missing) or matched by a regex.

    Numbers share one set (Python hashes equal int/float/Decimal alike); strings, ObjectIds,
    booleans and dates get a set per exact type; other values are compared one by one.
    """
    numbers: set = set()
    hashed: dict[type, set] = {}
    others: list[Any] = []
    has_null = has_nan = False
    for v in values:
        t = type(v)
        if t is int or t is Int64:  # the common case first: a large $in of integers
            numbers.add(v)
        elif v is None:
            has_null = True
        elif t in _HASHED_TYPES and not (t is datetime.datetime and v.tzinfo is not None):
            hashed.setdefault(t, set()).add(v)
        elif T.bracket(v) == T.BRACKET_NUMBER:
            if T.is_nan(v):
                has_nan = True
            else:
                numbers.add(number_value(v))
        else:
            others.append(v)
    slow = tuple([equality_predicate(v) for v in others] + list(regexes))
    return _membership_test(numbers, hashed, slow, has_null, has_nan)


def _membership_test(numbers: set, hashed: dict[type, set], slow: tuple, has_null: bool,
                     has_nan: bool) -> ElemPredicate:
    strings = hashed.get(str, set())

    def in_matches(v: Any) -> bool:
        t = type(v)
        if t is str:
            if v in strings:
                return True
        elif t is int or t is Int64:
            if v in numbers:
                return True
        elif t is float:
            if v in numbers or (has_nan and v != v):
                return True
        elif t is Decimal128:
            d = v.to_decimal()
            if (has_nan and d.is_nan()) or (not d.is_nan() and d in numbers):
                return True
        elif v is None or v is MISSING or t is Undefined:
            if has_null:
                return True
        elif t in hashed:
            if v in hashed[t]:
                return True
        for p in slow:
            if p(v):
                return True
        return False

    return in_matches


# ---- parsing -------------------------------------------------------------------------------

def parse_comparison(ctx: ParseContext, path: str | None, op: str, arg: Any) -> Node:
    """{path: {$eq|$ne|$gt|$gte|$lt|$lte: arg}} -> node (mongod's parseComparison checks)."""
    if type(arg) is Regex and op not in (EQ, "$ne"):
        raise CommandError(ErrorCode.BadValue,
                           f"Can't have RegEx as arg to predicate over field '{path or ''}'.")
    if op == "$ne" and type(arg) is Regex:
        raise CommandError(ErrorCode.BadValue, "Can't have regex as arg to $ne.")
    if type(arg) is Undefined:
        raise CommandError(ErrorCode.BadValue, "cannot compare to undefined")
    node = leaf(path, comparison_predicate(EQ if op == "$ne" else op, arg))
    return NotNode(node) if op == "$ne" else node


def parse_in(ctx: ParseContext, path: str | None, op: str, arg: Any) -> Node:
    """$in / $nin: an array of values and regexes (no operator documents)."""
    if type(arg) is not list:
        raise CommandError(ErrorCode.BadValue, f"{op} needs an array")
    values, regexes = [], []
    for item in arg:
        if is_expression_document(item, allow_incomplete_dbref=False):
            raise CommandError(ErrorCode.BadValue, "cannot nest $ under $in")
        if type(item) is Regex:
            regexes.append(regex_predicate(*regex_operand(item)))
        elif type(item) is Undefined:
            raise CommandError(ErrorCode.BadValue, "InMatchExpression equality cannot be undefined")
        else:
            values.append(item)
    elem = in_predicate(values, regexes)
    node = leaf(path, elem)
    if path is not None and "." not in path and not regexes:
        node.match = _membership_field(path, values, elem)
    return NotNode(node) if op == "$nin" else node


def _membership_field(path: str, values: list[Any],
                      elem: ElemPredicate) -> Callable[[Mapping], bool]:
    """`{field: {$in: [...]}}` without regexes: exact-type set lookups before the general test."""
    strings = frozenset(v for v in values if type(v) is str)
    numbers = frozenset(v for v in values if type(v) in (int, float, Int64) and v == v)

    def field_in(doc: Mapping) -> bool:
        v = doc.get(path, MISSING)
        t = type(v)
        if t is str:
            return v in strings
        if (t is int or t is Int64 or t is float) and v in numbers:
            return True
        if t is list:
            for x in v:
                if elem(x):
                    return True
        return elem(v)

    return field_in
