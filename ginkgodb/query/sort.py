"""Sort specifications: `compile_sort(spec).key(doc)` gives bytes whose order is MongoDB's.

A field that holds an array sorts by its smallest element ascending and by its largest element
descending; a missing field sorts as null; an empty array sorts below null (as `undefined`).
Keys are key-codec bytes (descending components inverted), so plain byte comparison orders
documents exactly as mongod does and keys from different documents can be compared or hashed.
"""
from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any

from bson.dbref import DBRef
from bson.int64 import Int64

from ginkgodb.bsonutil.compare import compare
from ginkgodb.bsonutil.keycodec import encode_key, encode_value
from ginkgodb.bsonutil.paths import refused_dollar_name
from ginkgodb.bsonutil.types import Undefined
from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query import metadata

_UNDEFINED = Undefined()
_NUMERIC = frozenset({int, float, Int64})
_STRING = frozenset({str})


class SortSpec:
    """A compiled sort pattern. `fields` is [(path, direction)] in priority order."""

    __slots__ = ("fields", "paths", "directions", "is_simple", "key")

    def __init__(self, fields: list[tuple[str, int]]) -> None:
        self.fields = fields
        self.paths = [path.split(".") for path, _ in fields]
        self.directions = [d for _, d in fields]
        self.is_simple = all(len(p) == 1 for p in self.paths)
        self.key = self._make_key()

    @property
    def needs_array_handling(self) -> bool:
        """False when every sort path is a top-level field: the key then needs no path walk,
        only a check of whether the field's value itself is an array."""
        return not self.is_simple

    def _make_key(self) -> Any:
        directions = self.directions
        if self.is_simple and len(self.fields) == 1:
            name, direction = self.fields[0][0], directions[0]
            invert = direction < 0

            def key1(doc: dict) -> bytes:
                v = doc.get(name)
                if type(v) is list:
                    v = _array_extreme(v, direction)
                b = encode_value(v)
                return _invert(b) if invert else b
            return key1
        paths = self.paths
        heads = [p[0] for p in paths]
        distinct_heads = len(set(heads)) > 1

        def key(doc: dict) -> bytes:
            if distinct_heads:
                _check_parallel(doc, heads)
            values = [_sort_value(doc, path, d) for path, d in zip(paths, directions)]
            return encode_key(values, directions)
        return key

    def sort(self, docs: Iterable[dict]) -> list[dict]:
        """All documents in order (stable for equal keys)."""
        docs = docs if isinstance(docs, list) else list(docs)
        fast = self._fast_keys(docs)
        if fast is None:
            return sorted(docs, key=self.key)
        keys, reverse = fast
        order = sorted(range(len(docs)), key=keys.__getitem__, reverse=reverse)
        return [docs[i] for i in order]

    def top(self, docs: Iterable[dict], k: int) -> list[dict]:
        """The first `k` documents in order."""
        docs = docs if isinstance(docs, list) else list(docs)
        fast = self._fast_keys(docs)
        if fast is None:
            return heapq.nsmallest(k, docs, key=self.key)
        keys, reverse = fast
        pick = heapq.nlargest if reverse else heapq.nsmallest
        return [docs[i] for i in pick(k, range(len(docs)), key=keys.__getitem__)]

    def _fast_keys(self, docs: list[dict]) -> tuple[list, bool] | None:
        """Native Python keys when every sort field is a top-level number (no NaN) or string
        column: they order exactly like the key codec and cost far less. None otherwise."""
        if not self.is_simple or not docs:
            return None
        columns = []
        single = len(self.fields) == 1
        for (name, direction) in self.fields:
            col = [doc.get(name) for doc in docs]
            kinds = set(map(type, col))
            if kinds <= _NUMERIC and all(v == v for v in col):
                columns.append(col if direction > 0 or single else [-v for v in col])
            elif kinds == _STRING and (direction > 0 or single):
                columns.append(col)
            else:
                return None
        if single:
            return columns[0], self.directions[0] < 0
        return list(zip(*columns)), False

    def __repr__(self) -> str:
        return f"SortSpec({dict(self.fields)!r})"


def _check_parallel(doc: dict, heads: list[str]) -> None:
    seen = None
    for head in heads:
        if type(doc.get(head)) is list:
            if seen is not None and seen != head:
                raise CommandError(ErrorCode.BadValue,
                                   "cannot sort with keys that are parallel arrays")
            seen = head


def _invert(b: bytes) -> bytes:
    from ginkgodb.bsonutil.keycodec import invert
    return invert(b)


# ---- value extraction ------------------------------------------------------------------------


def _array_extreme(arr: list, direction: int) -> Any:
    """The element an array sorts by: smallest ascending, largest descending; [] is undefined."""
    if not arr:
        return _UNDEFINED
    best = arr[0]
    for v in arr[1:]:
        c = compare(v, best)
        if (c < 0) if direction > 0 else (c > 0):
            best = v
    return best


def _collect(value: Any, path: list[str], i: int, out: list) -> None:
    """Append every value `path[i:]` reaches in `value`, expanding arrays like index keys do:
    a leaf array contributes its elements ([] contributes undefined), a missing field null."""
    if i == len(path):
        if type(value) is list:
            out.extend(value) if value else out.append(_UNDEFINED)
        else:
            out.append(value)
        return
    part = path[i]
    if type(value) is DBRef:  # a DBRef is the document {$ref, $id, $db, ...}
        value = value.as_doc()
    if isinstance(value, dict):
        if part in value:
            _collect(value[part], path, i + 1, out)
        else:
            out.append(None)
    elif type(value) is list:
        if part.isdigit():
            idx = int(part)
            _collect(value[idx], path, i + 1, out) if idx < len(value) else out.append(None)
        elif not value:
            out.append(None)
        else:
            for elem in value:
                if isinstance(elem, (dict, DBRef)):
                    _collect(elem, path, i, out)
                else:
                    out.append(None)
    else:
        out.append(None)


def _sort_value(doc: dict, path: list[str], direction: int) -> Any:
    if len(path) == 1:
        v = doc.get(path[0])
        return _array_extreme(v, direction) if type(v) is list else v
    values: list = []
    _collect(doc, path, 0, values)
    if len(values) == 1:
        return values[0]
    return _array_extreme(values, direction)


# ---- compilation -----------------------------------------------------------------------------


def compile_sort(spec: Any) -> SortSpec:
    """Validate a sort document ({field: 1 | -1 | {$meta: ...}}) as mongod does."""
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.SortSpecNotObject,
                           "the $sort key specification must be an object")
    if not spec:
        raise CommandError(ErrorCode.SortStageWithoutKeys,
                           "$sort stage must have at least one sort key")
    rand_fields: list[str] = []
    fields = []
    for path, value in spec.items():
        direction = _direction(path, value)
        _validate_path(path)
        if direction == "randVal":
            rand_fields.append(path)
        elif direction == "textScore":
            fields.append((metadata.TEXT_SCORE_FIELD, -1))  # the best match first
        elif direction == "geoNearDistance":
            fields.append((metadata.GEO_NEAR_DISTANCE_FIELD, 1))  # the nearest first
        elif direction != "none":
            fields.append((path, direction))
    if len(fields) > 32:
        raise CommandError(ErrorCode.SortTooManyCompoundKeys, "too many compound keys")
    if not fields:
        fields.append(("$natural", 1))
    spec_obj = SortSpec(fields)
    if rand_fields and len(fields) == 1 and fields[0][0] == "$natural":
        spec_obj.key = _random_key(spec_obj.key)
    return spec_obj


def _random_key(key: Any) -> Any:
    import random
    return lambda doc: random.random().hex().encode()


def _direction(path: str, value: Any) -> Any:
    if isinstance(value, dict):
        if "$meta" not in value:
            raise CommandError(ErrorCode.SortExpressionNotMeta,
                               "$meta is the only expression supported by $sort right now")
        if len(value) != 1:
            raise CommandError(ErrorCode.FailedToParse, "Cannot have additional keys in a $meta "
                                                        "sort specification")
        meta = value["$meta"]
        if meta not in ("textScore", "randVal", "searchScore", "geoNearDistance",
                        "searchHighlights", "vectorSearchScore", "score"):
            from ginkgodb.query.expr.values import bson_repr
            raise CommandError(ErrorCode.SortIllegalMeta,
                               f"Illegal $meta sort: $meta: {bson_repr(meta)}")
        if meta in ("textScore", "geoNearDistance") and metadata.available(meta):
            return meta
        if meta in ("textScore", "geoNearDistance"):
            raise CommandError(ErrorCode.MetadataNotAvailable,
                               f"query requires {meta} metadata, but it is not available")
        return "randVal" if meta == "randVal" else "none"
    if isinstance(value, bool) or not isinstance(value, (int, float)) and \
            type(value).__name__ != "Decimal128":
        from ginkgodb.query.expr.values import bson_repr
        raise CommandError(ErrorCode.SortKeyIllegal, f"Illegal key in $sort specification: {path}: "
                                  f"{bson_repr(value)}")
    if type(value).__name__ == "Decimal128":
        import decimal
        d = value.to_decimal()
        number = int(d.to_integral_value(decimal.ROUND_HALF_EVEN)) if d.is_finite() else 0
    else:
        number = int(value) if value == value and abs(value) != float("inf") else 0
    if number == 1:
        return 1
    if number == -1:
        return -1
    raise CommandError(ErrorCode.SortOrderNotOneOrMinusOne,
                       "$sort key ordering must be 1 (for ascending) or -1 (for "
                       "descending)")


def _validate_path(path: str) -> None:
    if not path:
        raise CommandError(ErrorCode.FieldPathEmpty,
                           "FieldPath cannot be constructed with empty string")
    if path.endswith("."):
        raise CommandError(ErrorCode.FieldPathTrailingDot, "FieldPath must not end with a '.'.")
    for part in path.split("."):
        if not part:
            raise CommandError(ErrorCode.FieldPathEmptyName,
                               "FieldPath field names may not be empty strings.")
        if refused_dollar_name(part):
            raise CommandError(ErrorCode.FieldPathDollarPrefixed,
                               "FieldPath field names may not start with '$'. Consider "
                               "using $getField or $setField.")


def sort_key_values(doc: dict, spec: SortSpec) -> list[Any]:
    """The per-field values a document sorts by (for $sortKey-style introspection and tests)."""
    return [_sort_value(doc, p, d) for p, d in zip(spec.paths, spec.directions)]

