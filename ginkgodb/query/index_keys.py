"""The index keys of a document, following mongod's key generators.

B-tree indexes: dotted paths walk embedded documents and arrays. An array yields one key per
element (inner arrays are not expanded again). A numeric path component such as `a.0` picks one
array position. A missing field keys as null, and an empty array keys as undefined. One document
may expand only one array per index (error 171 otherwise). Hashed indexes allow no array
anywhere on an indexed path (error 16766). Which generator an index uses is its access
method's choice (engine/access/).

Keys come back encoded (`keycodec.encode_key` with the pattern's directions) together with the
multikey paths: the array-valued path prefixes that made the index multikey.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bson.dbref import DBRef
from bson.int64 import Int64

from ..bsonutil import types as T
from ..bsonutil.keycodec import encode_key, hash_value
from ..bsonutil.shell_format import format_value
from ..errors import CommandError, ErrorCode


class _Eoo:
    """An absent element (mongod's EOO): a path that leads nowhere."""


EOO = _Eoo()
UNDEFINED = T.Undefined()

KeyPattern = list[tuple[str, Any]]


def btree_keys(doc: Mapping, key_pattern: KeyPattern, *,
               sparse: bool = False) -> tuple[list[bytes], set[str]]:
    """(encoded keys, multikey paths) of `doc` for a B-tree index on `key_pattern` (numeric
    directions).

    Keys are de-duplicated and sorted. A sparse index gives no key to a document that lacks every
    indexed field.
    """
    directions = [-1 if kind < 0 else 1 for _, kind in key_pattern]
    flat = _flat_values(doc, key_pattern)
    if flat is not None:
        if sparse and all(v is EOO for v in flat):
            return [], set()
        return [encode_key([None if v is EOO else v for v in flat], directions)], set()
    walker = _BtreeWalker([path for path, _ in key_pattern], sparse)
    walker.walk(doc)
    keys = {encode_key(values, directions) for values in walker.keys}
    return sorted(keys), walker.multikey_paths


def _flat_values(doc: Mapping, key_pattern: KeyPattern) -> list[Any] | None:
    """The common case fast: top-level fields holding no arrays (None: take the general walk)."""
    values = []
    for path, _ in key_pattern:
        if "." in path:
            return None
        v = doc.get(path, EOO)
        if isinstance(v, list):
            return None
        values.append(v)
    return values


def get_field_or_eoo(container: Any, name: str) -> Any:
    """The element `name` of a document, or of an array read as a document ("0", "1", ...), else
    EOO. Unlike query.match.values.get_field (which answers MISSING) any Unicode digits pass
    the index check."""
    if isinstance(container, Mapping):
        return container.get(name, EOO)
    if isinstance(container, DBRef):  # pymongo decodes {$ref, $id} documents as DBRef
        return container.as_doc().get(name, EOO)
    if isinstance(container, list):
        if name.isdigit() and (name == "0" or name[0] != "0"):
            i = int(name)
            if i < len(container):
                return container[i]
    return EOO


def element_along_path(container: Any, path: str) -> tuple[Any, str, tuple[int, str] | None]:
    """Follow `path` through documents and stop at the first array (mongod's
    extractElementAtPathOrArrayAlongPath).

    Returns (element or EOO, the rest of the path after the returned element, the element's
    location). The location is (id of its container, field name); two fields that reach the
    same array share a location."""
    while True:
        head, _, rest = path.partition(".")
        sub = get_field_or_eoo(container, head)
        if sub is EOO:
            return EOO, rest, None
        if isinstance(sub, list) or not rest:
            return sub, rest, (id(container), head)
        if isinstance(sub, (Mapping, DBRef)):
            container, path = sub, rest
            continue
        return EOO, rest, None


class _Positional:
    """An array element picked by a numeric path component, resolved once per array."""

    __slots__ = ("element", "dotted", "rest", "location", "array")

    def __init__(self, array: list, element: Any, path: str) -> None:
        self.array, self.element = array, element
        self.dotted, self.rest, self.location = element_along_path(array, path)


class _BtreeWalker:
    """mongod's BtreeKeyGenerator as a recursion over (remaining path, fixed value) per field."""

    def __init__(self, paths: list[str], sparse: bool) -> None:
        self.paths = paths
        self.path_lengths = [p.count(".") + 1 for p in paths]
        self.sparse = sparse
        self.keys: list[list[Any]] = []
        self.multikey_paths: set[str] = set()

    def walk(self, doc: Mapping) -> None:
        n = len(self.paths)
        self._walk(list(self.paths), [None] * n, doc, 0, [None] * n)

    def _walk(self, names: list[str], fixed: list[Any], obj: Any, not_found: int,
              positional: list[_Positional | None]) -> None:
        arr: list | None = None
        arr_location = None
        arr_field = ""
        arr_idxs: list[int] = []
        may_expand = True
        for i, name in enumerate(names):
            if not name:
                continue
            e, rest, location, nested = self._next_element(obj, positional[i], name)
            names[i] = rest
            if e is EOO:
                fixed[i] = None
                names[i] = ""
                not_found += 1
            elif isinstance(e, list):
                arr_idxs.append(i)
                if arr is None:
                    arr, arr_location, arr_field = e, location, location[1]
                elif location != arr_location:
                    raise CommandError(ErrorCode.CannotIndexParallelArrays,
                                       f"cannot index parallel arrays [{location[1]}] [{arr_field}]")
                if nested:
                    may_expand = False
            else:
                fixed[i] = e
        if arr is None:
            if not (self.sparse and not_found == len(names)):
                self.keys.append(list(fixed))
            return
        if not arr:
            if may_expand:
                for i in arr_idxs:
                    self._mark_multikey(i, names[i])
            self._expand_one(names, fixed, UNDEFINED, not_found, arr, arr_idxs, True, [None] * len(names))
            return
        sub_positional = self._positional_info(names, arr, arr_idxs, may_expand)
        for element in arr:
            self._expand_one(names, fixed, element, not_found, arr, arr_idxs, may_expand, sub_positional)

    def _positional_info(self, names: list[str], arr: list, arr_idxs: list[int],
                         may_expand: bool) -> list[_Positional | None]:
        """For each field continuing past `arr`: the element a numeric component picks, if any."""
        info: list[_Positional | None] = [None] * len(names)
        for i, name in enumerate(names):
            if not name:
                if i in arr_idxs and may_expand:
                    self._mark_multikey(i, "")
                continue
            element = get_field_or_eoo(arr, name.partition(".")[0])
            if element is EOO:
                self._mark_multikey(i, name)
                continue
            info[i] = _Positional(arr, element, name)
        return info

    def _expand_one(self, names: list[str], fixed: list[Any], element: Any, not_found: int,
                    arr: list, arr_idxs: list[int], may_expand: bool,
                    positional: list[_Positional | None]) -> None:
        names, fixed = list(names), list(fixed)
        for i in arr_idxs:
            if not names[i]:
                fixed[i] = element if may_expand else arr
        sub = element if isinstance(element, (Mapping, DBRef)) else {}
        self._walk(names, fixed, sub, not_found, positional)

    @staticmethod
    def _next_element(obj: Any, pos: _Positional | None, name: str) -> tuple[Any, str, Any, bool]:
        head = name.partition(".")[0]
        has_field = get_field_or_eoo(obj, head) is not EOO
        if has_field and pos is not None:
            raise CommandError(ErrorCode.IndexKeyAmbiguousArrayField,
                               "Ambiguous field name found in array (do not use numeric field "
                               f"names in embedded elements in an array), field: '{head}' "
                               f"for array: {_array_as_object(pos.array)}")
        if has_field:
            e, rest, location = element_along_path(obj, name)
            return e, rest, location, False
        if pos is not None:
            return pos.dotted, pos.rest, pos.location, isinstance(pos.element, list)
        return EOO, "", None, False

    def _mark_multikey(self, i: int, suffix: str) -> None:
        """Record the path prefix of field i that ends just before `suffix` as an array."""
        suffix_len = suffix.count(".") + 1 if suffix else 0
        component = self.path_lengths[i] - suffix_len - 1
        self.multikey_paths.add(".".join(self.paths[i].split(".")[:component + 1]))


def _array_as_object(arr: list) -> str:
    if not arr:
        return "{}"
    return "{ " + ", ".join(f"{i}: {format_value(v)}" for i, v in enumerate(arr)) + " }"


def hashed_keys(doc: Mapping, key_pattern: KeyPattern, *, sparse: bool = False) -> list[bytes]:
    """One key per document: hashed fields as Int64 hashes, the others as plain values."""
    values = []
    has_value = False
    for path, kind in key_pattern:
        value, rest, _ = element_along_path(doc, path)
        if isinstance(value, list):
            at = path[:len(path) - len(rest) - (1 if rest else 0)]
            raise CommandError(ErrorCode.HashedIndexKeyIsArray,
                               "Error: hashed indexes do not currently support array values. "
                               f"Found array at path: {at}")
        if value is EOO:
            value = None
        else:
            has_value = True
        values.append(Int64(hash_value(value)) if kind == "hashed" else value)
    if sparse and not has_value:
        return []
    directions = [1 if kind == "hashed" or kind > 0 else -1 for _, kind in key_pattern]
    return [encode_key(values, directions)]
