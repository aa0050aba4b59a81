"""Index bounds as half-open byte ranges over stored index entries.

An entry is `encoded key + record id`. Key-codec encodings are prefix-free, so the entries
whose component lies in a value interval form one contiguous byte range. Leading point fields
expand as a cartesian product of byte prefixes. The first non-point field adds one range per
interval, and later fields are left unbounded.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from ..bsonutil.keycodec import invert
from .intervals import Interval, hull, is_full

MAX_RANGES = 200

ByteRange = tuple[bytes, Optional[bytes]]


def prefix_end(prefix: bytes) -> Optional[bytes]:
    """Least byte string above every string starting with `prefix` (None: none exists).

    The same rule as storage's prefix_end; the planner may not import storage."""
    p = bytearray(prefix)
    while p and p[-1] == 0xFF:
        p.pop()
    if not p:
        return None
    p[-1] += 1
    return bytes(p)


def component_range(iv: Interval, direction: int) -> tuple[Optional[bytes], Optional[bytes]]:
    """[L, H) over byte strings that start with the encoding of a value inside `iv`.

    L None: the range is empty. H None: the range is unbounded above."""
    lo, hi = iv.low.key, iv.high.key
    if direction < 0:
        lo, hi = invert(hi), invert(lo)
        lo_inclusive, hi_inclusive = iv.high_inclusive, iv.low_inclusive
    else:
        lo_inclusive, hi_inclusive = iv.low_inclusive, iv.high_inclusive
    start = lo if lo_inclusive else prefix_end(lo)
    end = prefix_end(hi) if hi_inclusive else hi
    return start, end


def build_key_ranges(fields: Sequence[tuple[list[Interval], int]],
                     cap: int = MAX_RANGES) -> tuple[list[ByteRange], bool]:
    """(ascending non-overlapping ranges, precise) for per-field (intervals, direction).

    precise is False when the ranges admit keys the intervals exclude: a capped product, or
    bounds on fields after the first non-point field."""
    prefixes = [b""]
    precise = True
    last = len(fields) - 1
    for idx, (intervals, direction) in enumerate(fields):
        if not intervals:
            return [], True
        if idx < last and all(iv.is_point() for iv in intervals) and len(prefixes) * len(intervals) <= cap:
            prefixes = _extend(prefixes, intervals, direction)
            continue
        if len(prefixes) * len(intervals) > cap and len(intervals) > 1:
            intervals, precise = [hull(intervals)], False
        if any(not is_full(ivs) for ivs, _ in fields[idx + 1:]):
            precise = False
        return _merge(_ranges(prefixes, intervals, direction)), precise
    return [(b"", None)], precise  # an empty key pattern


def _extend(prefixes: list[bytes], intervals: list[Interval], direction: int) -> list[bytes]:
    keys = sorted(invert(iv.low.key) if direction < 0 else iv.low.key for iv in intervals)
    return [p + k for p in prefixes for k in keys]


def _ranges(prefixes: list[bytes], intervals: list[Interval], direction: int) -> list[ByteRange]:
    parts = [component_range(iv, direction) for iv in intervals]
    parts.sort(key=lambda r: r[0] or b"")
    out: list[ByteRange] = []
    for p in prefixes:
        for start, end in parts:
            if start is None:
                continue
            out.append((p + start, p + end if end is not None else prefix_end(p)))
    return out


def _merge(ranges: list[ByteRange]) -> list[ByteRange]:
    ranges = [r for r in ranges if r[1] is None or r[0] < r[1]]
    ranges.sort(key=lambda r: r[0])
    out: list[ByteRange] = []
    for lo, hi in ranges:
        if out and (out[-1][1] is None or lo <= out[-1][1]):
            prev_lo, prev_hi = out[-1]
            out[-1] = (prev_lo, None if prev_hi is None or hi is None else max(prev_hi, hi))
        else:
            out.append((lo, hi))
    return out
