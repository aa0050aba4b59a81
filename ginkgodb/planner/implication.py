"""Does a query imply a partial index's filter? (Only then may the index answer the query.)

mongod's `expression::isSubsetOf(query, partialFilterExpression)`, over the same expression
tree mongod parses a filter into: `$and`/`$or` nodes, `$ne`/`$nin`/`$not`/`$exists: false` as
NOT of their positive form, and one leaf per operator. A False answer costs only an index; a
wrong True would lose documents, so every rule here is one of mongod's:
- equivalent expressions imply each other;
- the filter's `$and` needs each branch implied, its `$or` (and `$in`, an `$or` of equalities)
  one branch; the query's `$and` implies when one branch does, its `$or` when every branch does;
- a comparison implies a comparison on the same path whose range holds it (same canonical
  type; NaN only itself); an `$in` without regexes when each of its values does;
- `$exists: true` is implied by a non-null comparison, `$elemMatch`, `$exists`, `$mod`,
  `$regex`, `$size`, `$type`, an `$in` without null, and `$ne: null` / `$nin` with null.
Nothing else implies a `$type`, a regex or an `$in` of the filter except an equivalent one.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, NamedTuple, Union

from bson.decimal128 import Decimal128
from bson.regex import Regex

from ..bsonutil.compare import compare
from ..bsonutil.types import TYPE_ALIASES, bracket

_COMPARISONS = {"$eq": "EQ", "$lt": "LT", "$lte": "LTE", "$gt": "GT", "$gte": "GTE"}
_RANGE = frozenset({"EQ", "LT", "LTE", "GT", "GTE"})


class Leaf(NamedTuple):
    path: str
    op: str          # EQ LT LTE GT GTE IN EXISTS TYPE REGEX ELEM_MATCH SIZE MOD OTHER
    arg: Any


class Not(NamedTuple):
    child: Node


class And(NamedTuple):
    children: tuple


class Or(NamedTuple):
    children: tuple


class Opaque(NamedTuple):
    """A part of a filter no rule reasons about ($expr, $nor, $where, ...)."""

    spec: Any


Node = Union[Leaf, Not, And, Or, Opaque]


# ------------------------------------------------------------------------------------ parsing
def parse_tree(spec: Any) -> Node:
    """The expression tree of a filter document (nested `$and`s flattened, one-branch nodes
    replaced by their branch, as mongod's optimizer does)."""
    if not isinstance(spec, Mapping):
        return Opaque(spec)
    nodes: list[Node] = []
    for key, value in spec.items():
        if key == "$and" and isinstance(value, list):
            nodes.extend(parse_tree(s) for s in value)
        elif key == "$or" and isinstance(value, list):
            nodes.append(_simplify(Or(tuple(parse_tree(s) for s in value))))
        elif key.startswith("$"):
            nodes.append(Opaque({key: value}))
        else:
            nodes.extend(_field(key, value))
    return _simplify(And(tuple(nodes)))


def _simplify(node: Node) -> Node:
    if isinstance(node, And):
        flat: list[Node] = []
        for child in node.children:
            flat.extend(child.children if isinstance(child, And) else (child,))
        return flat[0] if len(flat) == 1 else And(tuple(flat))
    if isinstance(node, Or) and len(node.children) == 1:
        return node.children[0]
    return node


def _is_operator_doc(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value) and all(str(k).startswith("$") for k in value)


def _field(path: str, value: Any) -> list[Node]:
    if isinstance(value, (Regex, re.Pattern)):
        return [Leaf(path, "REGEX", _regex_key(value, None))]
    if not _is_operator_doc(value):
        return [Leaf(path, "EQ", value)]
    if "$regex" in value:
        rest = {k: v for k, v in value.items() if k not in ("$regex", "$options")}
        return [Leaf(path, "REGEX", _regex_key(value["$regex"], value.get("$options"))), *_ops(path, rest)]
    return _ops(path, value)


def _ops(path: str, ops: Mapping) -> list[Node]:
    out: list[Node] = []
    for op, arg in ops.items():
        if op in _COMPARISONS:
            out.append(Leaf(path, _COMPARISONS[op], arg))
        elif op == "$ne":
            out.append(Not(Leaf(path, "EQ", arg)))
        elif op == "$in" and isinstance(arg, list):
            out.append(_in(path, arg))
        elif op == "$nin" and isinstance(arg, list):
            out.append(Not(_in(path, arg)))
        elif op == "$exists":
            exists = Leaf(path, "EXISTS", True)
            out.append(exists if _truthy(arg) else Not(exists))
        elif op == "$type":
            out.append(Leaf(path, "TYPE", _type_set(arg)))
        elif op == "$elemMatch":
            out.append(Leaf(path, "ELEM_MATCH", arg))
        elif op in ("$size", "$mod"):
            out.append(Leaf(path, op[1:].upper(), arg))
        elif op == "$all" and isinstance(arg, list) and arg and not any(_is_operator_doc(a) for a in arg):
            for item in arg:
                out.extend(_field(path, item))
        elif op == "$not":
            inner = _field(path, arg)
            out.append(Not(inner[0] if len(inner) == 1 else And(tuple(inner))))
        else:
            out.append(Leaf(path, "OTHER", {op: arg}))
    return out


def _in(path: str, values: list) -> Node:
    regexes = tuple(_regex_key(v, None) for v in values if isinstance(v, (Regex, re.Pattern)))
    equalities = tuple(v for v in values if not isinstance(v, (Regex, re.Pattern)))
    if len(equalities) == 1 and not regexes:
        return Leaf(path, "EQ", equalities[0])   # mongod's optimizer: a one-value $in is an equality
    return Leaf(path, "IN", (equalities, regexes))


def _truthy(arg: Any) -> bool:
    if isinstance(arg, Decimal128):
        return arg.to_decimal() != 0
    return bool(arg)


def _regex_key(pattern: Any, options: Any) -> tuple[str, str]:
    if isinstance(pattern, re.Pattern):
        pattern = Regex.from_native(pattern)
    if isinstance(pattern, Regex):
        flags = pattern.flags if isinstance(pattern.flags, str) else Regex.from_native(
            re.compile(pattern.pattern, pattern.flags)).flags
        return pattern.pattern, "".join(sorted(str(options or flags or "")))
    return str(pattern), "".join(sorted(str(options or "")))


def _type_set(arg: Any) -> frozenset:
    items = arg if isinstance(arg, list) else [arg]
    return frozenset(TYPE_ALIASES.get(t, t) if isinstance(t, str) else _number(t) for t in items)


def _number(t: Any) -> Any:
    try:
        return int(t.to_decimal() if isinstance(t, Decimal128) else t)
    except (TypeError, ValueError, ArithmeticError):
        return repr(t)


# ---------------------------------------------------------------------------------- implication
def filter_implies(query: Any, partial: Mapping) -> bool:
    """`query` is a filter document or a ParsedQuery (whose tree is parsed once)."""
    tree = getattr(query, "implication_tree", None)
    if tree is None:
        tree = parse_tree(query if isinstance(query, Mapping) else {})
    return is_subset(tree, parse_tree(partial))


def is_subset(lhs: Node, rhs: Node) -> bool:
    """mongod's isSubsetOf: does every document `lhs` matches also match `rhs`?"""
    if equivalent(lhs, rhs):
        return True
    if isinstance(rhs, And):
        return all(is_subset(lhs, child) for child in rhs.children)
    if isinstance(lhs, And):
        return any(is_subset(child, rhs) for child in lhs.children)
    if isinstance(lhs, Or):
        return all(is_subset(child, rhs) for child in lhs.children)
    if isinstance(rhs, Or):
        return any(is_subset(lhs, child) for child in rhs.children)
    if isinstance(rhs, Leaf) and rhs.op == "IN":
        equalities, regexes = rhs.arg
        return not regexes and any(is_subset(lhs, Leaf(rhs.path, "EQ", v)) for v in equalities)
    if isinstance(rhs, Leaf) and rhs.op in _RANGE:
        return _subset_of_comparison(lhs, rhs)
    if isinstance(rhs, Leaf) and rhs.op == "EXISTS":
        return _subset_of_exists(lhs, rhs)
    return False


def _subset_of_comparison(lhs: Node, rhs: Leaf) -> bool:
    if not isinstance(lhs, Leaf) or lhs.path != rhs.path or isinstance(rhs.arg, list):
        return False
    if lhs.op in _RANGE:
        return _comparison_inside(lhs, rhs)
    if lhs.op == "IN":
        equalities, regexes = lhs.arg
        return not regexes and all(_comparison_inside(Leaf(lhs.path, "EQ", v), rhs) for v in equalities)
    return False


def _is_nan(v: Any) -> bool:
    if isinstance(v, float):
        return math.isnan(v)
    return isinstance(v, Decimal128) and v.to_decimal().is_nan()


def _comparison_inside(lhs: Leaf, rhs: Leaf) -> bool:
    a, b = lhs.arg, rhs.arg
    if bracket(a) != bracket(b):
        return False
    if _is_nan(a) or _is_nan(b):  # NaN compares equal only to itself
        inclusive = ("EQ", "LTE", "GTE")
        return _is_nan(a) and _is_nan(b) and lhs.op in inclusive and rhs.op in inclusive
    cmp = compare(a, b)
    if lhs.op == rhs.op and cmp == 0:
        return True
    if rhs.op in ("LT", "LTE") and lhs.op in ("LT", "LTE", "EQ"):
        return cmp <= 0 if rhs.op == "LTE" else cmp < 0 or (cmp == 0 and lhs.op == "LT")
    if rhs.op in ("GT", "GTE") and lhs.op in ("GT", "GTE", "EQ"):
        return cmp >= 0 if rhs.op == "GTE" else cmp > 0 or (cmp == 0 and lhs.op == "GT")
    return False


_EXISTENTIAL = frozenset({"ELEM_MATCH", "EXISTS", "MOD", "REGEX", "SIZE", "TYPE"})


def _subset_of_exists(lhs: Node, rhs: Leaf) -> bool:
    if isinstance(lhs, Not):
        child = lhs.child
        if not isinstance(child, Leaf) or child.path != rhs.path:
            return False
        if child.op == "EQ":
            return child.arg is None
        return child.op == "IN" and any(v is None for v in child.arg[0])
    if not isinstance(lhs, Leaf) or lhs.path != rhs.path:
        return False
    if lhs.op in _RANGE:
        return lhs.arg is not None
    if lhs.op == "IN":
        return not any(v is None for v in lhs.arg[0])
    return lhs.op in _EXISTENTIAL


# ---------------------------------------------------------------------------------- equivalence
def equivalent(a: Node, b: Node) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (And, Or)):
        assert isinstance(b, (And, Or))
        return len(a.children) == len(b.children) and all(
            any(equivalent(x, y) for y in b.children) for x in a.children) and all(
            any(equivalent(x, y) for x in a.children) for y in b.children)
    if isinstance(a, Not):
        assert isinstance(b, Not)
        return equivalent(a.child, b.child)
    if isinstance(a, Opaque):
        return False
    assert isinstance(a, Leaf) and isinstance(b, Leaf)
    if a.path != b.path or a.op != b.op:
        return False
    if a.op in _RANGE:
        return _same_value(a.arg, b.arg)
    if a.op == "IN":
        (ea, ra), (eb, rb) = a.arg, b.arg
        return (set(ra) == set(rb) and all(any(_same_value(x, y) for y in eb) for x in ea)
                and all(any(_same_value(x, y) for x in ea) for y in eb))
    if a.op in ("EXISTS", "TYPE", "REGEX"):
        return bool(a.arg == b.arg)
    if a.op in ("SIZE", "MOD", "ELEM_MATCH"):
        return _same_value(a.arg, b.arg)
    return False


def _same_value(a: Any, b: Any) -> bool:
    """Equal as mongod compares values (1 and 1.0 are; true and 1 are not)."""
    try:
        return bracket(a) == bracket(b) and compare(a, b) == 0
    except Exception:  # a value outside BSON: never equivalent
        return False
