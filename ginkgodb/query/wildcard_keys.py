"""Wildcard index keys (`{"$**": 1}`, `{"a.$**": 1}`, `wildcardProjection`), as mongod keys them.

Every leaf a document holds under the indexed paths gets one key `(path, value)`: mongod's
`{$_path: "a.b", value}` pair, encoded as a two-field key so that one path's values are
contiguous and ordered. Embedded documents are descended; an array's elements are keyed at the
array's own path (no positions) and the path is multikey; arrays inside arrays are keyed whole;
an empty document or array is keyed as itself (so `$exists` finds it). `_id` is left out unless
the projection includes it.

`WildcardProjection` says which paths are indexed: `covers(path)` (every value at `path` is
keyed) is what the planner asks before it uses the index for a predicate on `path`.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from ..bsonutil.keycodec import encode_key

_LEAF = True
_IN, _OUT, _PARTIAL = "in", "out", "partial"


class WildcardProjection:
    """The indexed paths of a wildcard index: a subtree (`a.$**`) or a wildcardProjection."""

    def __init__(self, key_field: str, projection: Optional[Mapping] = None, direction: int = 1) -> None:
        tree: dict = {}
        self.directions = (1, -1 if direction < 0 else 1)   # the path ascends; values as the key says
        self.include = True
        self.id_included = False
        if key_field != "$**":   # "a.b.$**": exactly the subtree at a.b
            _insert(tree, key_field[:-len(".$**")].split("."))
            self.id_included = key_field.split(".", 1)[0] == "_id"
        elif projection:
            others = {p: v for p, v in projection.items() if p != "_id"}
            self.include = not others or bool(next(iter(others.values())))
            self.id_included = bool(projection.get("_id", False))
            for path in others:
                _insert(tree, path.split("."))
        else:
            self.include = False   # everything but _id
        self.tree = tree

    def child(self, node: Optional[dict], name: str) -> tuple[str, Optional[dict]]:
        """(whether the field `name` under `node` is in, out or only on the way to indexed
        paths; the projection subtree below it)."""
        if node is None:
            return _IN, None
        sub = node.get(name)
        if sub is _LEAF:
            return (_IN, None) if self.include else (_OUT, None)
        if isinstance(sub, dict):
            return (_PARTIAL, sub) if self.include else (_IN, sub)
        return (_OUT, None) if self.include else (_IN, None)

    def covers(self, path: str) -> bool:
        """Whether every value at `path` (and below it) is keyed."""
        parts = path.split(".")
        if parts[0] == "_id" and not self.id_included:
            return False
        if parts[0] == "_id" and "_id" not in self.tree:
            return True
        node: Optional[dict] = self.tree
        state = _IN
        for part in parts:
            state, node = self.child(node, part)
            if state == _OUT:
                return False
        return state == _IN and node is None   # nothing below it left out


def _insert(tree: dict, parts: list[str]) -> None:
    node = tree
    for part in parts[:-1]:
        sub = node.get(part)
        if sub is _LEAF:
            return
        if not isinstance(sub, dict):
            sub = node[part] = {}
        node = sub
    node[parts[-1]] = _LEAF


def wildcard_keys(doc: Mapping, projection: WildcardProjection) -> tuple[list[bytes], set[str]]:
    """(encoded `(path, value)` keys, multikey paths) of a document."""
    pairs: set = set()
    keys: list[bytes] = []
    multikey: set[str] = set()
    directions = projection.directions

    def add(path: str, value: Any) -> None:
        key = encode_key((path, value), directions)
        if key not in pairs:
            pairs.add(key)
            keys.append(key)

    def walk_doc(obj: Mapping, prefix: str, node: Optional[dict], top: bool = False) -> None:
        for name, value in obj.items():
            if top and name == "_id":
                if not projection.id_included:
                    continue
                state, sub = projection.child(node, name) if "_id" in (node or {}) else (_IN, None)
            else:
                state, sub = projection.child(node, name)
            if state == _OUT:
                continue
            walk_value(value, prefix + name, sub, state == _PARTIAL)

    def walk_value(value: Any, path: str, node: Optional[dict], partial: bool) -> None:
        if isinstance(value, Mapping):
            if not value:
                if not partial:
                    add(path, {})
                return
            walk_doc(value, path + ".", node)
        elif isinstance(value, list):
            multikey.add(path)
            if not value and not partial:
                add(path, [])
            for element in value:
                if isinstance(element, Mapping) and element:
                    walk_doc(element, path + ".", node)
                elif not partial:
                    add(path, element)
        elif not partial:
            add(path, value)

    walk_doc(doc, "", projection.tree if projection.tree or projection.include else None, top=True)
    keys.sort()
    return keys, multikey
