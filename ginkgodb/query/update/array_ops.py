"""Array modifiers: $push (with $each $slice $sort $position), $addToSet, $pop, $pull, $pullAll."""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from bson.regex import Regex

from ginkgodb.bsonutil.types import is_bson_number, type_name
from ginkgodb.errors import CommandError, ErrorCode

from . import numeric
from .array_filters import check_plain_filter
from .integers import parse_long
from .nodes import NOOP, ApplyState, LeafNode
from .paths import array_index, dotted
from .render import id_element, render_document
from .values import copy_value

Comparator = Callable[[Any, Any], int]
_PUSH_CLAUSES = ("$each", "$slice", "$sort", "$position")


class PushNode(LeafNode):
    __slots__ = ("values", "slice", "sort_key", "position")
    op = "$push"

    def __init__(self, field: str, value: Any, compare: Comparator) -> None:
        self.slice: int | None = None
        self.sort_key: Callable[[Any], Any] | None = None
        self.position: int | None = None
        if isinstance(value, Mapping) and "$each" in value:
            self._parse_clauses(value, compare)
        else:
            self.values = [value]

    def _parse_clauses(self, spec: Mapping, compare: Comparator) -> None:
        for clause in spec:
            if clause not in _PUSH_CLAUSES:
                raise CommandError(ErrorCode.BadValue, f"Unrecognized clause in $push: {clause}")
        each = spec["$each"]
        if not isinstance(each, list):
            raise CommandError(ErrorCode.BadValue, "The argument to $each in $push must be an "
                               f"array but it was of type: {type_name(each)}")
        self.values = list(each)
        if "$slice" in spec:
            self.slice = _integer_clause(spec["$slice"], "The value for $slice must be an "
                                         "integer value but was given type: ")
        if "$sort" in spec:
            self.sort_key = _sort_key(spec["$sort"], compare)
        if "$position" in spec:
            self.position = _integer_clause(spec["$position"], "The value for $position must be "
                                            "an integer value, not of type: ")

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        if not isinstance(value, list):
            raise CommandError(ErrorCode.BadValue,
                               f"The field '{dotted(path)}' must be an array but is of type "
                               f"{type_name(value)} in document {{{id_element(state.doc)}}}")
        return self._push(value)

    def create(self, path: list[str], state: ApplyState) -> Any:
        result = self._push([])
        return [] if result is NOOP else result

    def _push(self, array: list) -> Any:
        changed = bool(self.values)
        result = list(array)
        if self.values:
            at = _insert_index(len(result), self.position)
            result[at:at] = [copy_value(v) for v in self.values]
        if self.sort_key is not None:
            result.sort(key=self.sort_key)
            changed = True
        if self.slice is not None:
            limit = abs(self.slice)
            if len(result) > limit:
                result = result[:limit] if self.slice >= 0 else result[len(result) - limit:]
                changed = True
        return result if changed else NOOP


def _integer_clause(value: Any, message: str) -> int:
    try:
        return parse_long("", value)
    except CommandError:
        raise CommandError(ErrorCode.BadValue, message + type_name(value)) from None


def _insert_index(size: int, position: int | None) -> int:
    """Where $push inserts its first value: past the end, at `position`, or counted from the end."""
    if position is None or size == 0 or position > size:
        return size
    if position > 0:
        return position
    if position < 0 and -position < size:
        return size + position
    return 0


def _sort_key(spec: Any, compare: Comparator) -> Callable[[Any], Any]:
    if isinstance(spec, Mapping):
        return _pattern_key(_check_sort_pattern(spec), compare)
    direction = _unit_direction(spec)
    if direction is not None:
        return functools.cmp_to_key(lambda a, b: direction * compare(a, b))
    if is_bson_number(spec):
        raise CommandError(ErrorCode.BadValue, "The $sort element value must be either 1 or -1")
    raise CommandError(ErrorCode.BadValue, "The $sort is invalid: use 1/-1 to sort the whole "
                       "element, or {field:1/-1} to sort embedded fields")


def _unit_direction(value: Any) -> int | None:
    """1 or -1 when `value` is a number equal to one of them (any numeric type)."""
    if not is_bson_number(value):
        return None
    v = numeric.to_decimal(value)
    return int(v) if v in (1, -1) else None


def _check_sort_pattern(spec: Mapping) -> list[tuple[list[str], int]]:
    if not spec:
        raise CommandError(ErrorCode.BadValue,
                           "The $sort pattern is empty when it should be a set of fields.")
    pattern = []
    for field, order in spec.items():
        direction = _unit_direction(order)
        if direction is None:
            raise CommandError(ErrorCode.BadValue,
                               "The $sort element value must be either 1 or -1")
        if field == "":
            raise CommandError(ErrorCode.BadValue, "The $sort field cannot be empty")
        parts = field.split(".")
        if "" in parts:
            raise CommandError(ErrorCode.BadValue, "The $sort field is a dotted field but has an "
                               f"empty part: {field}")
        pattern.append((parts, direction))
    return pattern


def _pattern_key(pattern: list[tuple[list[str], int]], compare: Comparator) -> Callable:
    def extract(element: Any) -> list[Any]:
        doc = element if isinstance(element, Mapping) else {"": element}
        return [_dotted_value(doc, parts) for parts, _ in pattern]

    def cmp(a: Any, b: Any) -> int:
        for (x, y, (_, direction)) in zip(extract(a), extract(b), pattern):
            c = compare(x, y)
            if c:
                return c * direction
        return 0

    return functools.cmp_to_key(cmp)


def _dotted_value(doc: Any, parts: list[str]) -> Any:
    """BSONObj::getFieldDotted: arrays are only entered by index; missing is null."""
    current = doc
    for part in parts:
        if isinstance(current, Mapping):
            if part not in current:
                return None
            current = current[part]
        elif isinstance(current, list):
            idx = array_index(part)
            if idx is None or idx >= len(current):
                return None
            current = current[idx]
        else:
            return None
    return current


class AddToSetNode(LeafNode):
    __slots__ = ("values", "compare")
    op = "$addToSet"

    def __init__(self, field: str, value: Any, compare: Comparator) -> None:
        self.compare = compare
        values = [value]
        if isinstance(value, Mapping) and value and next(iter(value)) == "$each":
            each = value["$each"]
            if not isinstance(each, list):
                raise CommandError(ErrorCode.TypeMismatch, "The argument to $each in $addToSet "
                                   f"must be an array but it was of type {type_name(each)}")
            if len(value) > 1:
                raise CommandError(ErrorCode.BadValue, "Found unexpected fields after $each in "
                                   f"$addToSet: {render_document(value)}")
            values = each
        self.values: list[Any] = []
        for v in values:
            if not any(compare(v, seen) == 0 for seen in self.values):
                self.values.append(v)

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        if not isinstance(value, list):
            raise CommandError(ErrorCode.BadValue, "Cannot apply $addToSet to non-array field. "
                               f"Field named '{path[-1]}' has non-array type {type_name(value)}")
        missing = [v for v in self.values if not any(self.compare(x, v) == 0 for x in value)]
        if not missing:
            return NOOP
        return value + [copy_value(v) for v in missing]

    def create(self, path: list[str], state: ApplyState) -> Any:
        return [copy_value(v) for v in self.values]


class PopNode(LeafNode):
    __slots__ = ("from_front",)
    op = "$pop"
    allow_creation = False

    def __init__(self, field: str, value: Any) -> None:
        n = parse_long(field, value)
        if n not in (1, -1):
            raise CommandError(ErrorCode.FailedToParse, f"$pop expects 1 or -1, found: {n}")
        self.from_front = n == -1

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        if not isinstance(value, list):
            raise CommandError(ErrorCode.TypeMismatch, f"Path '{dotted(path)}' contains an "
                               f"element of non-array type '{type_name(value)}'")
        if not value:
            return NOOP
        return value[1:] if self.from_front else value[:-1]


class ArrayCullingNode(LeafNode):
    """Removes the elements a predicate selects ($pull, $pullAll)."""

    __slots__ = ("matches",)
    allow_creation = False

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        if not isinstance(value, list):
            raise CommandError(ErrorCode.BadValue, "Cannot apply $pull to a non-array value")
        kept = [v for v in value if not self.matches(v)]
        return NOOP if len(kept) == len(value) else kept


class PullAllNode(ArrayCullingNode):
    __slots__ = ()
    op = "$pullAll"

    def __init__(self, field: str, value: Any, compare: Comparator) -> None:
        if not isinstance(value, list):
            raise CommandError(ErrorCode.BadValue, "$pullAll requires an array argument but "
                               f"was given a {type_name(value)}")
        targets = list(value)
        self.matches = lambda v: any(compare(v, t) == 0 for t in targets)


class PullNode(ArrayCullingNode):
    __slots__ = ()
    op = "$pull"

    def __init__(self, field: str, value: Any, compare: Comparator,
                 compile_filter: Callable[[Any], Callable[[Any], bool]]) -> None:
        if isinstance(value, Mapping):
            check_plain_filter(value)
        if isinstance(value, Mapping) and not _starts_with_operator(value):
            matcher = compile_filter(value)
            self.matches = lambda v: isinstance(v, Mapping) and matcher(v)
        elif isinstance(value, (Mapping, Regex)):
            wrapped = compile_filter({"x": value})
            self.matches = lambda v: wrapped({"x": v})
        else:
            self.matches = lambda v: compare(v, value) == 0


_PATH_OPERATORS = frozenset({
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all", "$exists", "$mod",
    "$type", "$regex", "$options", "$elemMatch", "$size", "$not", "$near", "$nearSphere",
    "$geoIntersects", "$geoWithin", "$within", "$bitsAllSet", "$bitsAllClear", "$bitsAnySet",
    "$bitsAnyClear", "$maxDistance", "$minDistance", "$geometry",
})


def _starts_with_operator(spec: Mapping) -> bool:
    """mongod's parsePathAcceptingKeyword on the first field: {$gt: 1} vs {a: 1} / {$and: ...}."""
    return bool(spec) and next(iter(spec)) in _PATH_OPERATORS
