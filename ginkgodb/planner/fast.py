"""Shortcuts for the queries applications run most: a point or a one-sided/two-sided range on the
leading field of an index, possibly with other conditions beside it.

mongod answers `{_id: v}` through its IDHACK path; we do the same and extend it to any index whose
first field carries an equality or a simple range. On a compound index, equalities on its leading
fields narrow the scan to the next field's equality or range too, as mongod's bounds do (the
bucket pattern's `{sensor: s, count: {$lt: 60}}` on `{sensor: 1, count: 1}` reads the open
bucket's entry, not every bucket of the sensor). Anything else (sorts, hints, $or, arrays,
nulls, regexes, partial indexes) goes to the full planner in `choose.py`. The property test
`tests/property/test_plans_agree.py` holds both paths to the collection-scan answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, Optional

from bson.decimal128 import Decimal128

from ..bsonutil import keycodec
from ..bsonutil.types import BRACKET_NUMBER, bracket
from .key_ranges import prefix_end
from .plain import plain_value

_RANGE_OPS = frozenset({"$gt", "$gte", "$lt", "$lte"})
_MINUS_INFINITY = keycodec.encode_value(float("-inf"))


@dataclass
class FastPlan:
    index: Any                        # catalog IndexMeta
    ranges: list                      # [(lo, hi)] over encoded keys, ascending
    residual: Optional[dict]          # what the index does not already guarantee (None: nothing)
    is_equality: bool                 # every field the ranges bound is an equality
    #: the encoded equalities on the leading fields before the last one the ranges bound, which
    #: begin every range (b"": the ranges bound the leading field alone)
    prefix: bytes = b""


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
    if first == BRACKET_NUMBER and any(_is_nan(v) for v in values):
        return None  # NaN sorts below every number and matches only $gte/$lte NaN: the full planner
    return "range", cond


def _is_nan(v: Any) -> bool:
    return v != v if isinstance(v, float) else isinstance(v, Decimal128) and v.is_nan()


class IndexMap:
    """Indexes by leading field, best first, for the shortcut planner (rebuilt when indexes change),
    and the planner's decisions per filter shape (`recipes`), which live as long as it does."""

    __slots__ = ("by_field", "recipes")

    #: decisions kept per collection handle; past it they are all dropped (an application's
    #: shapes are few; a client inventing new field names is not allowed to grow this)
    MAX_RECIPES = 512

    def __init__(self, indexes: list) -> None:
        by_field: dict[str, list] = {}
        for ix in indexes:
            options = ix.options
            if options and (options.get("hidden") or "partialFilterExpression" in options
                            or options.get("collation")):
                continue  # hidden, partial, or keyed by a collation: the full planner decides
            field, direction = next(iter(ix.key.items()))
            if not isinstance(direction, (int, float)) or isinstance(direction, bool):
                continue
            if any(d in ("2d", "2dsphere") for d in ix.key.values()):
                continue  # geo indexes leave documents without a location out: not a B-tree
            if "." in field and any(part.isdigit() for part in field.split(".")):
                continue  # positional paths: index keys hold nested arrays whole
            by_field.setdefault(field, []).append(ix)
        for entries in by_field.values():
            entries.sort(key=lambda ix: (not (len(ix.key) == 1 and ix.unique), len(ix.key)))
        self.by_field = by_field
        self.recipes: dict[tuple, Optional[Recipe]] = {}

    def remember(self, shape: tuple, recipe: Optional[Recipe]) -> None:
        if len(self.recipes) >= self.MAX_RECIPES:
            self.recipes.clear()
        self.recipes[shape] = recipe


class Recipe(NamedTuple):
    """What the shortcut planner decided for a filter shape: the index, the fields its ranges
    bound in key order (equalities, then the last one's equality or range) with their
    directions and kinds, and whether all of them are equalities. The values are not in it:
    `_instantiate` encodes each filter's own."""
    index: Any
    steps: tuple          # ((field, direction, kind "eq" | "range"), ...)
    bound: frozenset      # the fields of `steps`: the residual is the filter without them
    is_equality: bool


_NAN = "NaN"       # a float NaN's place in a shape: it is not a plain value, other floats are
_UNKNOWN = object()


def filter_shape(filt: dict) -> Optional[tuple]:
    """What the shortcut planner's decision for `filt` depends on, besides the indexes: the field
    names in order, each value's type (a NaN apart) and an operator document's operators and
    their values' types. None when an operator's value is a document or an array (their
    contents would matter): such filters are decided each time."""
    parts = []
    for field, cond in filt.items():
        t = type(cond)
        if t is dict:
            ops = []
            for op, v in cond.items():
                vt = type(v)
                if vt is dict or vt is list:
                    return None
                ops.append((op, _NAN if vt is float and v != v else vt))
            parts.append((field, tuple(ops)))
        elif t is list:
            return None
        else:
            parts.append((field, _NAN if t is float and cond != cond else t))
    return tuple(parts)


def fast_plan(index_map: IndexMap, query: Any) -> Optional[FastPlan]:
    """A plan for a query (a ParsedQuery or a filter) on one index without the general planner,
    or None. Decided once per filter shape (`filter_shape`); each call encodes its values."""
    filt = getattr(query, "filter", query)
    if type(filt) is not dict or not filt:
        return None
    shape = filter_shape(filt)
    if shape is None:
        recipe = _decide(index_map, filt)
    else:
        recipe = index_map.recipes.get(shape, _UNKNOWN)
        if recipe is _UNKNOWN:
            recipe = _decide(index_map, filt)
            index_map.remember(shape, recipe)
    return None if recipe is None else _instantiate(recipe, filt)


def _decide(index_map: IndexMap, filt: dict) -> Optional[Recipe]:
    by_field = index_map.by_field
    best = best_kind = None
    contenders = 0
    for field, cond in filt.items():
        if field[:1] == "$":
            return None
        candidates = by_field.get(field)
        if candidates is None:
            continue
        p = _predicate(cond)
        if p is None:
            contenders += len(candidates)  # indexes the full planner might prefer: let it decide
            continue
        kind = p[0]
        for ix in candidates:
            if kind == "range":
                direction = ix.key[field]
                if direction < 0 or field in ix.multikey_paths or "." in field:
                    continue
            contenders += 1
            if kind == "eq" and len(ix.key) == 1 and ix.unique:
                return _recipe(ix, kind, filt)  # a unique point: nothing can beat it
            if best is None:
                best, best_kind = ix, kind
    if best is None or best_kind is None or contenders > 1:
        return None  # several indexes qualify: the full planner compares them
    return _recipe(best, best_kind, filt)


def _recipe(best, kind: str, filt: dict) -> Recipe:
    fields = iter(best.key.items())
    field, direction = next(fields)
    steps = [(field, direction, kind)]
    while kind == "eq":   # an equality on this field: the next one's predicate narrows the scan
        following = next(fields, None)
        narrowing = None if following is None else _narrowing(best, *following, filt)
        if narrowing is None:
            break
        (field, direction), kind = following, narrowing[0]
        steps.append((field, direction, kind))
    return Recipe(best, tuple(steps), frozenset(f for f, _, _ in steps), kind == "eq")


def _instantiate(recipe: Recipe, filt: dict) -> FastPlan:
    """The plan of `recipe` for this filter's values."""
    steps = recipe.steps
    prefix = b""
    for f, d, _ in steps[:-1]:     # equalities
        prefix += _eq_key(_eq_value(filt[f]), d)
    field, direction, kind = steps[-1]
    cond = filt[field]
    ranges = _eq_ranges(_eq_value(cond), direction) if kind == "eq" else _range_ranges(cond)
    if prefix:
        ranges = [(prefix + lo, prefix + hi) for lo, hi in ranges]
    bound = recipe.bound
    residual = None if len(filt) == len(bound) else {k: v for k, v in filt.items() if k not in bound}
    return FastPlan(recipe.index, ranges, residual, recipe.is_equality, prefix)


def _eq_value(cond: Any) -> Any:
    """An equality's value: `v` or `{$eq: v}` (`_predicate` accepted only these)."""
    return cond["$eq"] if type(cond) is dict else cond


def _narrowing(ix, field: str, direction: Any, filt: dict) -> Optional[tuple[str, Any]]:
    """The predicate on a later index field that bounds the scan after equalities on the fields
    before it, or None: the same rules as on the leading field (IndexMap's and fast_plan's)."""
    if field not in filt or not isinstance(direction, (int, float)) or isinstance(direction, bool):
        return None   # unconstrained, or a hashed, text or geo component
    if "." in field and any(part.isdigit() for part in field.split(".")):
        return None
    p = _predicate(filt[field])
    if p is not None and p[0] == "range" and (direction < 0 or field in ix.multikey_paths or "." in field):
        return None
    return p


def _eq_key(value: Any, direction: Any) -> bytes:
    key = keycodec.encode_value(value)
    return keycodec.invert(key) if direction < 0 else key


def _eq_ranges(value: Any, direction: int) -> list:
    key = _eq_key(value, direction)
    return [(key, prefix_end(key))]


def _range_ranges(cond: dict) -> list:
    first = next(iter(cond.values()))
    b = bracket(first)
    lo, hi = keycodec.bracket_min(b), keycodec.bracket_max(b)
    if b == BRACKET_NUMBER:
        lo = _MINUS_INFINITY  # NaN sits below -inf in the number bracket and matches no range
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
