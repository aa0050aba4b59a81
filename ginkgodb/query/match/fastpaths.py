"""Fused closures for the filters that dominate real workloads.

`{path: scalar}` and `{path: {$eq|$gt|$gte|$lt|$lte: scalar}}` with a number (not NaN),
string, ObjectId or bool operand, on a top-level field or a two-part path (`address.zip`,
`items.sku`), compile to one closure doing dict `get`s, an exact-type check and a native Python
comparison. Anything unusual on the way (a DBRef, a numeric path component, a Decimal128 value)
is handed to the general single-value predicate or path walker, so results are identical.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from bson.int64 import Int64
from bson.objectid import ObjectId

from ginkgodb.bsonutil.types import Undefined

from .comparison import comparison_predicate
from .nodes import AndNode, Node, PathNode
from .paths import path_predicate
from .values import MISSING, is_all_digits, is_object

_CMP = {"$eq": operator.eq, "$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt,
        "$lte": operator.le}
_NUMBER_TYPES = frozenset({int, float, Int64})

Elem = Callable[[Any], bool]


def fast_equality(path: str, value: Any) -> Node | None:
    if value is None:
        return fast_null_equality(path)
    return fast_leaf(path, "$eq", value)


def fast_leaf(path: str, op: str, value: Any) -> Node | None:
    """A fused node for `{path: {op: value}}`, or None when the general path is needed."""
    parts = path.split(".")
    if op not in _CMP or len(parts) > 2 or any(is_all_digits(p) for p in parts):
        return None
    t = type(value)
    if t is int or t is Int64 or (t is float and value == value):
        scalar_types = _NUMBER_TYPES
    elif t is str or t is ObjectId or t is bool:
        scalar_types = frozenset({t})
    else:
        return None
    elem = comparison_predicate(op, value)
    test = _scalar_test(op, value, scalar_types, elem)
    node = PathNode(path, elem)
    if len(parts) == 1:
        node.match = _fused_field(parts[0], op, value, scalar_types, elem)
    else:
        node.match = _fused_subfield(parts[0], parts[1], test, path_predicate(path, elem))
    return node


def _scalar_test(op: str, r: Any, scalar_types: frozenset, elem: Elem) -> Elem:
    """The leaf test: a value (or each element of an array value) compared with `r`."""
    cmp = _CMP[op]
    if op == "$eq" and type(r) is str:
        def str_equal(v: Any) -> bool:
            t = type(v)
            if t is str:
                return v == r
            if t is list:  # `in` runs in C; a str subclass (Code) could fool it, so confirm
                if r in v:
                    for x in v:
                        if x == r and type(x) is str:
                            return True
                return False
            return v is not None and elem(v)
        return str_equal

    def scalar_compare(v: Any) -> bool:
        t = type(v)
        if t in scalar_types:
            return cmp(v, r)
        if t is list:
            for x in v:
                if type(x) in scalar_types:
                    if cmp(x, r):
                        return True
                elif elem(x):
                    return True
            return False
        return v is not None and elem(v)

    return scalar_compare


def _fused_field(key: str, op: str, r: Any, scalar_types: frozenset,
                 elem: Elem) -> Callable[[Mapping], bool]:
    """_scalar_test inlined after the dict lookup: one Python call per document."""
    cmp = _CMP[op]
    if op == "$eq" and type(r) is str:
        def str_field_equal(doc: Mapping) -> bool:
            v = doc.get(key)
            t = type(v)
            if t is str:
                return v == r
            if t is list:
                if r in v:  # C-speed scan; a str subclass (Code) could fool it, so confirm
                    for x in v:
                        if x == r and type(x) is str:
                            return True
                return False
            return v is not None and elem(v)
        return str_field_equal

    def field_compare(doc: Mapping) -> bool:
        v = doc.get(key)
        t = type(v)
        if t in scalar_types:
            return cmp(v, r)
        if t is list:
            for x in v:
                if type(x) in scalar_types:
                    if cmp(x, r):
                        return True
                elif elem(x):
                    return True
            return False
        return v is not None and elem(v)

    return field_compare


def _fused_subfield(outer: str, inner: str, test: Elem,
                    general: Callable[[Mapping], bool]) -> Callable[[Mapping], bool]:
    def subfield_matches(doc: Mapping) -> bool:
        sub = doc.get(outer)
        t = type(sub)
        if t is dict:
            return test(sub.get(inner))
        if t is list:
            for x in sub:
                if type(x) is dict:
                    if test(x.get(inner)):
                        return True
                elif is_object(x):
                    return general(doc)  # a DBRef or other mapping: let the walker decide
            return False
        return is_object(sub) and general(doc)  # else the path reaches nothing

    return subfield_matches


def fast_null_equality(path: str) -> Node | None:
    """`{field: null}` on a top-level field: null, undefined or missing (or such an element)."""
    if "." in path:
        return None
    elem = comparison_predicate("$eq", None)

    def null_field(doc: Mapping) -> bool:
        v = doc.get(path, MISSING)
        if v is None or v is MISSING:
            return True
        if type(v) is list:
            for x in v:
                if x is None or type(x) is Undefined:
                    return True
            return False
        return type(v) is Undefined

    node = PathNode(path, elem)
    node.match = null_field
    return node



_LOWER, _UPPER = ("$gt", "$gte"), ("$lt", "$lte")


def fast_range(path: str, spec: Mapping, nodes: list[Node]) -> Node | None:
    """`{field: {$gt(e): lo, $lt(e): hi}}` on a top-level field as one closure.

    A scalar value is tested against both bounds at once; an array value keeps mongod's rule
    that each bound may be satisfied by a different element (the two nodes run separately).
    """
    if "." in path or len(spec) != 2 or len(nodes) != 2:
        return None
    (op1, lo), (op2, hi) = spec.items()
    if op1 in _UPPER:
        (op1, lo), (op2, hi) = (op2, hi), (op1, lo)
    if op1 not in _LOWER or op2 not in _UPPER:
        return None
    kinds = {_scalar_kind(lo), _scalar_kind(hi)}
    if len(kinds) != 1 or None in kinds:
        return None
    scalar_types = kinds.pop()
    low_cmp, high_cmp = _CMP[op1], _CMP[op2]
    low_elem, high_elem = comparison_predicate(op1, lo), comparison_predicate(op2, hi)
    first, second = nodes[0].match, nodes[1].match

    def in_range(doc: Mapping) -> bool:
        v = doc.get(path)
        t = type(v)
        if t in scalar_types:
            return low_cmp(v, lo) and high_cmp(v, hi)
        if t is list:
            return first(doc) and second(doc)
        return v is not None and low_elem(v) and high_elem(v)

    node = AndNode(nodes)
    node.match = in_range
    return node


def _scalar_kind(value: Any) -> frozenset | None:
    t = type(value)
    if t is int or t is Int64 or (t is float and value == value):
        return _NUMBER_TYPES
    if t is str:
        return frozenset({t})
    return None
