"""planner.fast against fixtures/fast.yaml: the shortcut plans, in explain's bounds strings."""
from __future__ import annotations

from typing import Any, Optional

import pytest
from unit.planner.fixture_data import index_meta, params

from ginkgodb.bsonutil.keycodec import decode_key, decode_value, encode_key, encode_value, invert
from ginkgodb.planner import intervals as I
from ginkgodb.planner.explain_format import format_value
from ginkgodb.planner.fast import IndexMap, fast_plan
from ginkgodb.planner.key_ranges import prefix_end


def plan(case: dict) -> Optional[dict]:
    """The one adapter between a fixture case and the shortcut planner's API."""
    indexes = [index_meta(i, spec) for i, spec in enumerate(case["indexes"])]
    index_map = IndexMap(indexes)
    fp = fast_plan(index_map, case["filter"])
    assert fast_plan(index_map, case["filter"]) == fp   # the second from the remembered decision
    if fp is None:
        return None
    return {"index": fp.index.name, "bounds": explain_bounds(fp.index.key, fp.ranges, fp.prefix),
            "residual": fp.residual, "is_equality": fp.is_equality}


def explain_bounds(key: dict, ranges: list, prefix: bytes = b"") -> dict:
    """mongod's indexBounds for byte ranges that begin with `prefix`, the encoded equalities on
    the leading fields, and bound the next field (later fields are unbounded)."""
    items = list(key.items())
    points = _points(prefix, [d for _, d in items])
    out = {field: [f"[{format_value(v)}, {format_value(v)}]"] for (field, _), v in zip(items, points)}
    field, direction = items[len(points)]
    for lo, hi in ranges:
        assert lo.startswith(prefix) and hi.startswith(prefix), (prefix, lo, hi)
    out[field] = [_interval(lo[len(prefix):], hi[len(prefix):], direction) for lo, hi in ranges]
    for field, d in items[len(points) + 1:]:
        out[field] = ["[MaxKey, MinKey]" if d == -1 else "[MinKey, MaxKey]"]
    return out


def _points(prefix: bytes, directions: list) -> list:
    """The values of the leading fields whose encodings (in their directions) make `prefix`."""
    for n in range(len(directions)):
        values = decode_key(prefix, directions[:n]) if n else []
        if encode_key(values, directions[:n]) == prefix:
            return values
    raise AssertionError(f"no leading values encode as {prefix!r}")


def _exactly(key: bytes) -> Any:
    """The value whose whole encoding is `key`, else a sentinel."""
    try:
        value = decode_value(key)
    except Exception:
        return _NONE
    return value if encode_value(value) == key else _NONE


_NONE = object()


def _below(key: bytes) -> Any:
    """The value v with prefix_end(encode(v)) == key, else the sentinel."""
    if not key or key[-1] == 0:
        return _NONE
    value = _exactly(key[:-1] + bytes([key[-1] - 1]))
    return value if value is not _NONE and prefix_end(encode_value(value)) == key else _NONE


def _interval(lo: bytes, hi: Optional[bytes], direction: int) -> str:
    if direction < 0:  # descending keys are inverted: only points are shortcut there
        value = _exactly(invert(lo))
        assert value is not _NONE and hi == prefix_end(lo), (lo, hi)
        return f"[{format_value(value)}, {format_value(value)}]"
    if (v := _exactly(lo)) is not _NONE and hi == prefix_end(lo):
        return f"[{format_value(v)}, {format_value(v)}]"  # read first: fixed-width keys are ambiguous
    if v is not _NONE:
        low = "[" + format_value(v)
    elif len(lo) == 1:
        low = "[" + format_value(I.min_for_bracket(lo[0]).value)
    else:
        v = _below(lo)
        assert v is not _NONE, lo
        low = "(" + format_value(v)
    if hi is None:
        high = "MaxKey]"
    elif len(hi) == 1:
        bound, inclusive = I.max_for_bracket(hi[0] - 1)
        high = format_value(bound.value) + ("]" if inclusive else ")")
    elif (v := _exactly(hi)) is not _NONE:
        high = format_value(v) + ")"
    else:
        v = _below(hi)
        assert v is not _NONE, hi
        high = format_value(v) + "]"
    return f"{low}, {high}"


@pytest.mark.parametrize("case", params("fast"))
def test_fast(case):
    assert plan(case) == case["expect"]
