"""A filter flattened into per-path predicates ("atoms") for bounds building.

Top-level fields and `$and` are conjunctions. Each `$elemMatch` opens a scope: predicates inside
one scope concern the same array element, which decides whether bounds on a multikey path may be
intersected or compounded. `$or`, `$nor`, `$where`, `$expr` and `$text` are left to the caller;
they only make the result incomplete.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bson.regex import Regex

from ..bsonutil.compare import regex_parts

_UNINDEXED_TOP = {"$or", "$nor", "$where", "$expr", "$text", "$jsonSchema", "$alwaysFalse",
                  "$alwaysTrue", "$sampleRate"}
_NOT_VALUE_ELEM_MATCH = {"$and", "$or", "$nor", "$where", "$expr", "$text", "$comment", "$jsonSchema"}


@dataclass(frozen=True, slots=True)
class Scope:
    """A conjunction whose predicates refer to one array element (`path`), or the top level."""
    id: int
    path: str


@dataclass(slots=True)
class Atom:
    path: str
    op: str                      # "$eq", "$gt", "$in", "$regex", "$not", "$exists", ... or "other"
    operand: Any
    scopes: tuple[Scope, ...]    # outermost first; the first is the top level
    flags: str = ""              # regex options

    @property
    def in_elem_match(self) -> bool:
        return len(self.scopes) > 1


@dataclass
class ParsedFilter:
    atoms: list[Atom] = field(default_factory=list)
    complete: bool = True        # False when some clause was left out (e.g. a top-level $or)


TOP = Scope(0, "")


def parse_filter(spec: Mapping) -> ParsedFilter:
    out = ParsedFilter()
    _parse_conjunction(spec, "", (TOP,), out, itertools.count(1))
    return out


def _parse_conjunction(spec: Any, prefix: str, scopes: tuple[Scope, ...], out: ParsedFilter,
                       ids: Any) -> None:
    if not isinstance(spec, Mapping):
        out.complete = False
        return
    for key, value in spec.items():
        if key == "$and" and isinstance(value, list):
            for clause in value:
                _parse_conjunction(clause, prefix, scopes, out, ids)
        elif key == "$comment":
            continue
        elif key.startswith("$"):
            out.complete = False  # $or/$nor/$expr/... : planned elsewhere or not indexable
        else:
            _parse_field(prefix + key, value, scopes, out, ids)


def _is_operator_doc(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value) and next(iter(value)).startswith("$")


def _parse_field(path: str, value: Any, scopes: tuple[Scope, ...], out: ParsedFilter, ids: Any) -> None:
    if isinstance(value, (Regex, re.Pattern)):
        out.atoms.append(Atom(path, "$regex", value, scopes))
    elif _is_operator_doc(value):
        _parse_operators(path, value, scopes, out, ids)
    else:
        out.atoms.append(Atom(path, "$eq", value, scopes))


def _parse_operators(path: str, ops: Mapping, scopes: tuple[Scope, ...], out: ParsedFilter,
                     ids: Any) -> None:
    for op, operand in ops.items():
        if op == "$options":
            continue
        if op == "$regex":
            out.atoms.append(Atom(path, "$regex", operand, scopes, _regex_options(ops, operand)))
        elif op == "$elemMatch":
            _parse_elem_match(path, operand, scopes, out, ids)
        elif op == "$all":
            _parse_all(path, operand, scopes, out)
        elif op in ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists",
                    "$type", "$mod", "$not"):
            out.atoms.append(Atom(path, op, operand, scopes))
        else:
            out.atoms.append(Atom(path, "other", operand, scopes))


def _regex_options(ops: Mapping, operand: Any) -> str:
    options = ops.get("$options")
    if isinstance(options, str):
        return "".join(sorted(options))
    if isinstance(operand, (Regex, re.Pattern)):
        return regex_parts(operand)[1]
    return ""


def _parse_elem_match(path: str, spec: Any, scopes: tuple[Scope, ...], out: ParsedFilter, ids: Any) -> None:
    if not isinstance(spec, Mapping):
        out.atoms.append(Atom(path, "other", spec, scopes))
        return
    inner = scopes + (Scope(next(ids), path),)
    if spec and all(k.startswith("$") and k not in _NOT_VALUE_ELEM_MATCH for k in spec):
        # Value form: each predicate applies to one element as a whole. Nested arrays are index
        # keys as a whole, so $elemMatch/$all of an element cannot bound this path.
        for op, operand in spec.items():
            if op in ("$elemMatch", "$all"):
                out.atoms.append(Atom(path, "other", operand, inner))
            elif op != "$options":
                _parse_operators(path, {op: operand, **_options_of(spec, op)}, inner, out, ids)
    else:
        # The object form constrains sub-paths of one element; the path itself must be an array.
        out.atoms.append(Atom(path, "other", spec, scopes))
        _parse_conjunction(spec, path + ".", inner, out, ids)


def _options_of(spec: Mapping, op: str) -> dict:
    return {"$options": spec["$options"]} if op == "$regex" and "$options" in spec else {}


def _parse_all(path: str, values: Any, scopes: tuple[Scope, ...], out: ParsedFilter) -> None:
    """{$all: [x, y]} is {$and: [{path: x}, {path: y}]} (elemMatch members are not indexed here)."""
    if not isinstance(values, list) or not values or any(_is_operator_doc(v) for v in values):
        out.atoms.append(Atom(path, "other", values, scopes))
        return
    for v in values:
        op = "$regex" if isinstance(v, (Regex, re.Pattern)) else "$eq"
        out.atoms.append(Atom(path, op, v, scopes, _regex_options({}, v) if op == "$regex" else ""))
