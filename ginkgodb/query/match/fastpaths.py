"""Fused closures for the filters that dominate real workloads.

`{field: scalar}` and `{field: {$gt|$gte|$lt|$lte|$eq: scalar}}` on a top-level field, with a
number (not NaN), string, ObjectId or bool operand, compile to one closure that does a dict
`get`, an exact-type check and a native Python comparison; arrays and unusual types fall back
to the general single-value predicate. Results are identical to the general path.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from bson.int64 import Int64
from bson.objectid import ObjectId

from .comparison import comparison_predicate
from .nodes import Node, PathNode

_CMP = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}
_NUMBER_TYPES = frozenset({int, float, Int64})


def fast_equality(path: str, value: Any) -> Node | None:
    return fast_leaf(path, "$eq", value)


def fast_leaf(path: str, op: str, value: Any) -> Node | None:
    """A fused node for `{path: {op: value}}`, or None when the general path is needed."""
    if "." in path or (op != "$eq" and op not in _CMP):
        return None
    t = type(value)
    if t is int or t is Int64 or (t is float and value == value):
        scalar_types = _NUMBER_TYPES
    elif t is str or t is ObjectId or t is bool:
        scalar_types = frozenset({t})
    else:
        return None
    elem = comparison_predicate(op, value)
    if op == "$eq":
        match = _fused_equality(path, value, scalar_types, elem)
    else:
        match = _fused_order(path, value, scalar_types, _CMP[op], elem)
    node = PathNode(path, elem)
    node.match = match
    return node


def _fused_equality(key: str, r: Any, scalar_types: frozenset,
                    elem: Callable[[Any], bool]) -> Callable[[Mapping], bool]:
    def equals(doc: Mapping) -> bool:
        v = doc.get(key)
        t = type(v)
        if t in scalar_types:
            return v == r
        if t is list:
            for x in v:
                if elem(x):
                    return True
            return False
        return v is not None and elem(v)

    return equals


def _fused_order(key: str, r: Any, scalar_types: frozenset, cmp: Callable[[Any, Any], bool],
                 elem: Callable[[Any], bool]) -> Callable[[Mapping], bool]:
    def ordered(doc: Mapping) -> bool:
        v = doc.get(key)
        t = type(v)
        if t in scalar_types:
            return cmp(v, r)
        if t is list:
            for x in v:
                if elem(x):
                    return True
            return False
        return v is not None and elem(v)

    return ordered
