"""The nesting-depth walk: its shortcut for scalar types gives what the plain Mapping test gives."""
from __future__ import annotations

import datetime
import random
from collections.abc import Mapping
from typing import Any

import bson
import pytest
from bson.son import SON

from ginkgodb.engine.documents import MAX_USER_DEPTH, _too_deep


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
