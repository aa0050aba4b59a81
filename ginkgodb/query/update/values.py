"""Value helpers: mongod's binary equality (type-exact, order-sensitive) and defensive copies."""
from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.int64 import Int64

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def binary_equal(a: Any, b: Any) -> bool:
    """True when `a` and `b` would encode to the same BSON bytes (1 != 1.0, field order counts)."""
    ta, tb = type(a), type(b)
    if ta is dict and tb is dict:
        if len(a) != len(b):
            return False
        for (ka, va), (kb, vb) in zip(a.items(), b.items()):
            if ka != kb or not binary_equal(va, vb):
                return False
        return True
    if ta is list and tb is list:
        return len(a) == len(b) and all(binary_equal(x, y) for x, y in zip(a, b))
    if ta is not tb:
        if ta is DBRef or tb is DBRef:
            a = a.as_doc() if ta is DBRef else a
            b = b.as_doc() if tb is DBRef else b
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            return binary_equal(dict(a), dict(b))
        return False
    if ta is float:
        return struct.pack("<d", a) == struct.pack("<d", b)
    if ta is int:
        return a == b
    if ta is Int64:
        return int(a) == int(b)
    if ta is Decimal128:
        return a.bid == b.bid
    return a == b


def copy_value(v: Any) -> Any:
    """Deep copy of containers so a compiled update never shares mutable state with documents."""
    t = type(v)
    if t is dict:
        return {k: copy_value(x) for k, x in v.items()}
    if t is list:
        return [copy_value(x) for x in v]
    if isinstance(v, Mapping) and not hasattr(v, "as_doc"):
        return {k: copy_value(x) for k, x in v.items()}
    if t is tuple:
        return [copy_value(x) for x in v]
    return v
