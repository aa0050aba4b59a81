"""The byte-level regular expressions for ranges of stored numbers (query/match/raw_ranges.py)
match exactly the encodings of the numbers inside the range."""
from __future__ import annotations

import math
import re
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from ginkgodb.query.match.raw_ranges import double_range, signed_range, unsigned_range


def _matcher(alternatives: list[bytes]):
    if not alternatives:
        return lambda data: False
    rx = re.compile(b"(?:" + b"|".join(alternatives) + b")\\Z", re.DOTALL)
    return lambda data: rx.match(data) is not None


def test_every_two_byte_unsigned_range_edge():
    for lo, hi in [(0, 65535), (0, 0), (65535, 65535), (1, 255), (255, 256), (300, 4000), (257, 65534),
                   (0, 255), (256, 511), (4000, 300)]:
        inside = _matcher(unsigned_range(lo, hi, 2))
        for v in range(65536):
            assert inside(struct.pack("<H", v)) is (lo <= v <= hi), (lo, hi, v)


@settings(max_examples=300, deadline=None)
@given(st.integers(-2**31, 2**31 - 1), st.integers(-2**31, 2**31 - 1), st.lists(st.integers(-2**31, 2**31 - 1),
                                                                             max_size=30))
def test_signed_int32_ranges(a, b, probes):
    lo, hi = min(a, b), max(a, b)
    inside = _matcher(signed_range(lo, hi, 4))
    for v in probes + [lo, hi, lo - 1, hi + 1, 0, -1, 2**31 - 1, -2**31]:
        if -2**31 <= v < 2**31:
            assert inside(struct.pack("<i", v)) is (lo <= v <= hi), (lo, hi, v)


@settings(max_examples=300, deadline=None)
@given(st.integers(-2**63, 2**63 - 1), st.integers(-2**63, 2**63 - 1))
def test_signed_int64_ranges_at_their_edges(a, b):
    lo, hi = min(a, b), max(a, b)
    inside = _matcher(signed_range(lo, hi, 8))
    for v in (lo, hi, lo - 1, hi + 1, 0, -1, (lo + hi) // 2, 2**63 - 1, -2**63):
        if -2**63 <= v < 2**63:
            assert inside(struct.pack("<q", v)) is (lo <= v <= hi), (lo, hi, v)


def test_a_range_past_the_type_is_clipped():
    assert signed_range(2**40, 2**41, 4) == []
    inside = _matcher(signed_range(-2**40, 5, 4))
    assert inside(struct.pack("<i", -2**31)) and inside(struct.pack("<i", 5)) and not inside(struct.pack("<i", 6))


doubles = st.floats(allow_nan=False)


@settings(max_examples=500, deadline=None)
@given(doubles, doubles, st.lists(doubles, max_size=20))
def test_double_ranges(a, b, probes):
    lo, hi = min(a, b), max(a, b)
    inside = _matcher(double_range(lo, hi))
    for v in probes + [lo, hi, 0.0, -0.0, math.inf, -math.inf, math.nextafter(lo, -math.inf),
                       math.nextafter(hi, math.inf)]:
        assert inside(struct.pack("<d", v)) is (lo <= v <= hi), (lo, hi, v)
    assert not inside(struct.pack("<d", math.nan))


def test_both_zeros_are_inside_a_range_holding_zero():
    for lo, hi in [(-0.0, 1.0), (0.0, 1.0), (-1.0, 0.0), (-1.0, -0.0), (-0.0, 0.0)]:
        inside = _matcher(double_range(lo, hi))
        assert inside(struct.pack("<d", 0.0)) and inside(struct.pack("<d", -0.0)), (lo, hi)


_BYTES = st.binary(max_size=4).map(lambda b: b.replace(b"\x00", b"\x01"))   # a bound holds no NUL


@settings(max_examples=600, deadline=None)
@given(_BYTES, st.binary(max_size=5), st.booleans(), st.booleans())
def test_string_ranges(bound, content, lower, inclusive):
    """A string inside the range always matches; without an embedded NUL, exactly the strings
    inside do, but for one equal to the bound under `$gt`."""
    from ginkgodb.query.match.raw_ranges import string_range
    rx = re.compile(string_range(bound, lower, inclusive), re.DOTALL)
    matched = rx.match(content + b"\x00" + b"\x10next\x00") is not None
    if lower:
        inside = content > bound or (inclusive and content == bound)
    else:
        inside = content < bound or (inclusive and content == bound)
    if inside:
        assert matched, (bound, content, lower, inclusive)
    elif b"\x00" not in content and not (lower and content == bound):
        assert not matched, (bound, content, lower, inclusive)


def test_string_range_edges():
    from ginkgodb.query.match.raw_ranges import string_range

    def inside(bound, content, lower, inclusive):
        return re.match(string_range(bound, lower, inclusive), content + b"\x00", re.DOTALL) is not None
    assert inside(b"m", b"n", True, False) and inside(b"m", b"mz", True, False) and not inside(b"m", b"l", True, True)
    assert inside(b"", b"", True, True) and inside(b"", b"x", True, False)     # every string is >= ""
    assert inside(b"abc", b"ab", False, False) and inside(b"abc", b"", False, False)
    assert not inside(b"abc", b"abc", False, False) and inside(b"abc", b"abc", False, True)
    assert inside(b"\xff", b"\xfe\xff", False, False)
    assert inside(b"\xff", b"\xff", True, False)      # $gt: an equal string may pass (its NUL is not told apart)
    assert not inside(b"", b"", False, False)                                  # nothing is < ""


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=33, max_size=80).map(lambda b: b.replace(b"\x00", b"\x01")), st.binary(max_size=90),
       st.booleans(), st.booleans())
def test_a_long_string_bound_is_cut_and_still_never_misses(bound, content, lower, inclusive):
    """A bound past STRING_BOUND_BYTES is spelled out to that length only (a deep expression
    would exhaust the parser's recursion); strings inside the range still always match."""
    from ginkgodb.query.match.raw_ranges import string_range
    rx = re.compile(string_range(bound, lower, inclusive), re.DOTALL)
    content = content if len(content) % 2 else bound[:len(content)] + content   # often near the bound
    inside = (content > bound or (inclusive and content == bound)) if lower else (
        content < bound or (inclusive and content == bound))
    if inside:
        assert rx.match(content + b"\x00"), (bound, content, lower, inclusive)


def test_a_range_on_a_long_string_gets_a_test():
    import bson

    from ginkgodb.query.match import compile_filter
    bound = "x" * 5000
    for op in ("$gt", "$gte", "$lt", "$lte"):
        matcher = compile_filter({"a": {op: bound}})
        for stored in ("x" * 4999, bound, "x" * 5001, "w", "y"):
            raw = bson.encode({"a": stored})
            if matcher(bson.decode(raw)):
                assert matcher.raw_prefilter(raw), (op, len(stored))
