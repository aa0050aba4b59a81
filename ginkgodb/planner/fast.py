"""Shortcuts for the queries applications run most: a point or a one-sided/two-sided range on the
leading field of an index, possibly with other conditions beside it.

mongod answers `{_id: v}` through its IDHACK path; we do the same and extend it to any index whose
first field carries an equality or a simple range. Anything else (sorts, hints, $or, arrays,
nulls, regexes, partial indexes) goes to the full planner in `choose.py`. The property test
`tests/property/test_plans_agree.py` holds both paths to the collection-scan answer.
"""
from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from typing import Any, Optional

from bson.int64 import Int64
from bson.objectid import ObjectId

from ..bsonutil import keycodec
from ..bsonutil.types import bracket
from .key_ranges import prefix_end

# Types whose equality is plain value equality (no array/document/null/regex semantics).
_PLAIN = (int, float, str, ObjectId, datetime.datetime, Int64, bool)
_RANGE_OPS = frozenset({"$gt", "$gte", "$lt", "$lte"})


@dataclass
class FastPlan:
    index: Any                        # catalog IndexMeta
    ranges: list                      # [(lo, hi)] over encoded keys, ascending
    residual: Optional[dict]          # what the index does not already guarantee (None: nothing)
    is_equality: bool


def plain_value(v: Any) -> bool:
    """True for values whose equality is plain value equality (no array/null/regex rules)."""
    return isinstance(v, _PLAIN) and not (type(v) is float and math.isnan(v))


def _predicate(cond: Any) -> Optional[tuple[str, Any]]:
    """('eq', value) or ('range', {op: value}) for the shapes we shortcut, else None."""
    if plain_value(cond):
        return "eq", cond
    if type(cond) is not dict or not cond:
        return None
    if len(cond) == 1 and "$eq" in cond and plain_value(cond["$eq"]):
        return "eq", cond["$eq"]
    if not cond.keys() <= _RANGE_OPS:
        return None
    values = list(cond.values())
    if not all(plain_value(v) for v in values):
        return None
    first = bracket(values[0])
    if any(bracket(v) != first for v in values):
        return None
    return "range", cond


def fast_plan(indexes: list, filt: dict) -> Optional[FastPlan]:
    """A plan for `filt` on one index without the general planner, or None."""
    if type(filt) is not dict or not filt:
        return None
    preds = {}
    for field, cond in filt.items():
        if field[0] == "$":
            return None
        if "." in field and any(part.isdigit() for part in field.split(".")):
            continue  # positional paths: index keys hold nested arrays whole, the matcher looks inside
        p = _predicate(cond)
        if p is not None:
            preds[field] = p
    best = None
    best_score = None
    for ix in indexes:
        options = ix.options
        if options and (options.get("hidden") or "partialFilterExpression" in options):
            continue
        field, direction = next(iter(ix.key.items()))
        p = preds.get(field)
        if p is None or not isinstance(direction, (int, float)):
            continue
        kind = p[0]
        if kind == "range" and (direction < 0 or field in ix.multikey_paths or "." in field):
            continue
        score = (kind == "eq", kind == "eq" and len(ix.key) == 1 and ix.unique, -len(ix.key))
        if best_score is None or score > best_score:
            best, best_score = ix, score
    if best is None:
        return None
    field, direction = next(iter(best.key.items()))
    kind, arg = preds[field]
    ranges = _eq_ranges(arg, direction) if kind == "eq" else _range_ranges(arg)
    residual = {k: v for k, v in filt.items() if k != field} or None
    return FastPlan(best, ranges, residual, kind == "eq")


def _eq_ranges(value: Any, direction: int) -> list:
    key = keycodec.encode_value(value)
    if direction < 0:
        key = keycodec.invert(key)
    return [(key, prefix_end(key))]


def _range_ranges(cond: dict) -> list:
    first = next(iter(cond.values()))
    b = bracket(first)
    lo, hi = keycodec.bracket_min(b), keycodec.bracket_max(b)
    for op, v in cond.items():
        key = keycodec.encode_value(v)
        if op == "$gt":
            lo = max(lo, prefix_end(key))
        elif op == "$gte":
            lo = max(lo, key)
        elif op == "$lt":
            hi = min(hi, key)
        else:
            hi = min(hi, prefix_end(key))
    return [(lo, hi)] if lo < hi else []
