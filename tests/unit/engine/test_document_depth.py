"""The nesting-depth walk: its shortcut for scalar types gives what the plain Mapping test gives, and
an update's walk of what changed gives what the walk of the whole new document gives."""
from __future__ import annotations

import datetime
import random
from collections.abc import Mapping
from typing import Any

import bson
import pytest
from bson.son import SON

from ginkgodb.engine.documents import MAX_USER_DEPTH, _changes_too_deep, _too_deep


def _reference(doc: Mapping, *, for_update: bool) -> bool:
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        container, level = stack.pop()
        values = container.values() if isinstance(container, Mapping) else container
        for value in values:
            if for_update and level > MAX_USER_DEPTH:
                return True
            if isinstance(value, (Mapping, list)):
                if not for_update and level >= MAX_USER_DEPTH:
                    return True
                stack.append((value, level + 1))
    return False


class _List(list):
    pass


def _nested(depth: int, leaf: Any, rng: random.Random) -> Any:
    out = leaf
    for _ in range(depth):
        kind = rng.randrange(4)
        out = {"a": out} if kind == 0 else [out] if kind == 1 else SON([("s", out)]) if kind == 2 else _List([out])
    return out


SCALARS = [1, 1.5, "s", True, None, b"x", bson.ObjectId(), datetime.datetime(2020, 1, 1), bson.Int64(3),
           bson.Timestamp(1, 1), bson.Regex("a"), bson.Decimal128("1"), bson.Code("x"), bson.MinKey(), {}, []]


@pytest.mark.parametrize("seed", range(40))
def test_walk_agrees_with_the_mapping_test(seed):
    rng = random.Random(seed)
    for depth in (MAX_USER_DEPTH - 3, MAX_USER_DEPTH - 2, MAX_USER_DEPTH - 1, MAX_USER_DEPTH,
                  MAX_USER_DEPTH + 1, rng.randrange(150)):
        doc = {"x": rng.choice(SCALARS), "deep": _nested(depth, rng.choice(SCALARS), rng),
               "wide": [rng.choice(SCALARS) for _ in range(5)]}
        for for_update in (False, True):
            assert _too_deep(doc, for_update=for_update) == _reference(doc, for_update=for_update)


def _copy_on_write(doc: Any, path: list, replacement: Any) -> Any:
    """`doc` with the value at `path` replaced, sharing every other value (as the update engine)."""
    if not path:
        return replacement
    head, rest = path[0], path[1:]
    if isinstance(doc, Mapping):
        out = dict(doc) if type(doc) is dict else SON(doc)
        out[head] = _copy_on_write(doc.get(head, {}), rest, replacement)
        return out
    out = list(doc)
    if head < len(out):
        out[head] = _copy_on_write(out[head], rest, replacement)
    else:
        out.append(_copy_on_write([], rest, replacement))
    return out


def _paths(doc: Any, prefix: list) -> list:
    """Every path to a value inside `doc` (its containers' keys and indexes), `doc`'s own first."""
    out = [prefix]
    items = doc.items() if isinstance(doc, Mapping) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        out.extend(_paths(value, [*prefix, key]))
    return out


@pytest.mark.parametrize("seed", range(60))
def test_an_updates_walk_of_its_changes_agrees_with_the_whole_walk(seed):
    rng = random.Random(seed)
    for _ in range(10):
        old = {"_id": 1, "deep": _nested(rng.randrange(MAX_USER_DEPTH - 2), rng.choice(SCALARS), rng),
               "wide": [_nested(rng.randrange(4), rng.choice(SCALARS), rng) for _ in range(rng.randrange(6))]}
        if _too_deep(old, for_update=True):
            continue   # a stored document passed the rule
        path = rng.choice(_paths(old, []))[: rng.randrange(1, 120)] or ["new"]
        if rng.random() < 0.3:
            path = [*path[:-1], "added"] if path and isinstance(path[-1], str) else [*path, 0]
        replacement = _nested(rng.randrange(8) if rng.random() < 0.5 else rng.randrange(110),
                              rng.choice(SCALARS), rng)
        try:
            new = _copy_on_write(old, path, replacement)
        except (TypeError, AttributeError):
            continue   # the path went through a scalar
        assert _changes_too_deep(new, old) == _too_deep(new, for_update=True), (seed, path)


def test_an_unchanged_deep_subtree_is_not_walked_but_a_changed_one_is():
    deep: Any = "leaf"
    for _ in range(MAX_USER_DEPTH - 1):
        deep = {"a": deep}
    old = {"_id": 1, "deep": deep, "log": list(range(5))}
    grown = {**old, "log": [*old["log"], 5]}
    assert not _changes_too_deep(grown, old)
    deeper = {**old, "deep": {"a": deep}}      # one level more: past the limit
    assert _changes_too_deep(deeper, old) == _too_deep(deeper, for_update=True) is True
