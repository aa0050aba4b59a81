"""Regular expressions for ranges of numbers as BSON stores them (little-endian int32, int64,
and doubles), for the bytes test of range predicates (raw_prefilter.py).

An unsigned range [lo, hi] of n-byte integers is cut, most significant byte first, into the
usual runs of byte ranges: a shared prefix, then a partial lower run, whole middle bytes and a
partial upper run; each run is one alternative, written least significant byte first (the
order in the document). Two's complement integers split at zero into two unsigned ranges.
Doubles are ranges of their bit patterns: a non-negative double's bits grow with its value, a
negative one's shrink, so a range of doubles is at most two ranges of 64-bit patterns (NaN's
patterns lie outside both, as no range comparison matches NaN). Strings compare by their UTF-8
bytes (without a collation): a string above a bound shares some first bytes with it, then has a
greater byte; one below has a smaller byte or ends there (its terminating NUL is below every
byte), written as nested alternatives along the bound.
"""
from __future__ import annotations

import re
import struct
from typing import Optional

_BITS = struct.Struct("<Q")
_DOUBLE = struct.Struct("<d")


def _byte(b: int, to: Optional[int] = None) -> bytes:
    if to is None or to == b:
        return re.escape(bytes((b,)))
    if b == 0 and to == 255:
        return b"[\x00-\xff]"
    return b"[" + re.escape(bytes((b,))) + b"-" + re.escape(bytes((to,))) + b"]"


def _runs(lo: int, hi: int, n: int) -> list[list[tuple[int, int]]]:
    """[lo, hi] (unsigned, n bytes) as runs of per-byte ranges, most significant byte first."""
    if n == 0:
        return [[]]
    shift = 8 * (n - 1)
    low_mask = (1 << shift) - 1
    lo_top, lo_rest = lo >> shift, lo & low_mask
    hi_top, hi_rest = hi >> shift, hi & low_mask
    if lo_top == hi_top:
        return [[(lo_top, lo_top)] + run for run in _runs(lo_rest, hi_rest, n - 1)]
    out: list[list[tuple[int, int]]] = []
    first_whole, last_whole = lo_top, hi_top
    if lo_rest:
        out += [[(lo_top, lo_top)] + run for run in _runs(lo_rest, low_mask, n - 1)]
        first_whole += 1
    upper: list[list[tuple[int, int]]] = []
    if hi_rest != low_mask:
        upper = [[(hi_top, hi_top)] + run for run in _runs(0, hi_rest, n - 1)]
        last_whole -= 1
    if first_whole <= last_whole:
        out.append([(first_whole, last_whole)] + [(0, 255)] * (n - 1))
    return out + upper


def unsigned_range(lo: int, hi: int, n: int) -> list[bytes]:
    """Alternatives matching exactly the n-byte little-endian encodings of lo..hi."""
    if lo > hi:
        return []
    return [b"".join(_byte(a, b) for a, b in reversed(run)) for run in _runs(lo, hi, n)]


def signed_range(lo: int, hi: int, n: int) -> list[bytes]:
    """The same for two's complement integers of n bytes, lo..hi clipped to their range."""
    bits = 8 * n
    lo, hi = max(lo, -(1 << (bits - 1))), min(hi, (1 << (bits - 1)) - 1)
    if lo > hi:
        return []
    out: list[bytes] = []
    if lo < 0:
        out += unsigned_range(lo + (1 << bits), min(hi, -1) + (1 << bits), n)
    if hi >= 0:
        out += unsigned_range(max(lo, 0), hi, n)
    return out


def _bits(d: float) -> int:
    return int(_BITS.unpack(_DOUBLE.pack(d))[0])


def double_range(lo: float, hi: float) -> list[bytes]:
    """Alternatives matching the doubles d with lo <= d <= hi, as numbers compare: a zero bound
    of either sign holds both zeros; -inf and inf may be bounds; never NaN."""
    if not lo <= hi:
        return []
    out: list[bytes] = []
    if lo <= 0:     # the negative side, -0.0 included: bits shrink as d grows
        out += unsigned_range(_bits(hi if hi < 0 else -0.0), _bits(lo if lo < 0 else -0.0), 8)
    if hi >= 0:
        out += unsigned_range(_bits(lo if lo > 0 else 0.0), _bits(hi if hi > 0 else 0.0), 8)
    return out


#: the bound's bytes a string range spells out; past them any string sharing them passes (each
#: byte nests one group: a long bound would make a deep, slow expression)
STRING_BOUND_BYTES = 32


def string_range(bound: bytes, lower: bool, inclusive: bool) -> bytes:
    """A regular expression a string's bytes, followed by its NUL, match when the string is above
    `bound` (`lower`) or below it (or equal, `inclusive`); it may also match strings just past
    the bound (a string equal to it, for `$gt`: its NUL and an embedded NUL look alike; any
    string that shares a long bound's first STRING_BOUND_BYTES), never miss one inside. `bound`
    holds no NUL (the caller's check)."""
    cut = len(bound) > STRING_BOUND_BYTES
    if cut:
        bound = bound[:STRING_BOUND_BYTES]
    if lower:
        tail = b""      # the whole bound matched: the string equals it or is longer
        for b in reversed(bound):
            above = _byte(b + 1, 255) if b < 255 else None
            tail = re.escape(bytes((b,))) + tail
            tail = b"(?:" + above + b"|" + tail + b")" if above is not None else tail
        return tail
    # the whole bound matched: equal (its NUL next), never below for $lt, anything for a cut bound
    tail = b"" if cut else b"\x00" if inclusive else b"(?!)"
    for b in reversed(bound):
        tail = b"(?:" + _byte(0, b - 1) + b"|" + re.escape(bytes((b,))) + tail + b")"
    return tail


__all__ = ["STRING_BOUND_BYTES", "double_range", "signed_range", "string_range", "unsigned_range"]
