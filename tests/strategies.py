"""Hypothesis strategies for BSON values as pymongo decodes them (plus the types we accept).

`bson_values()` covers every type bracket, nested documents and arrays, the awkward numbers
(NaN, +-inf, -0.0, subnormals, Int64 beyond 2^53, Decimal128 with 34 digits and huge exponents)
and strings with NULs. `same_bracket_pairs()` draws two values of one bracket, where ordering
bugs hide; `equal_numbers()` draws one number in several representations.
"""
from __future__ import annotations

import datetime
import decimal

from bson.binary import Binary
from bson.code import Code
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp
from hypothesis import strategies as st

from ginkgodb.bsonutil.types import Undefined

INT32 = st.integers(-2**31, 2**31 - 1)
INT64 = st.one_of(
    st.integers(-2**63, 2**63 - 1),
    st.integers(-2**10, 2**10).map(lambda d: 2**53 + d),
    st.integers(-2**10, 2**10).map(lambda d: 2**62 + d * 1024 + d % 7),
).map(Int64)
DOUBLES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 0.5, -0.5, 1.0, 2.0**53, 2.0**63, -2.0**63, 5e-324, 1.7976931348623157e308]),
    st.integers(-2**60, 2**60).map(float),
)


@st.composite
def decimal128s(draw) -> Decimal128:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return Decimal128(draw(st.sampled_from(["NaN", "-NaN", "Infinity", "-Infinity", "-0", "0E+300", "1E+6144", "-9.999999999999999999999999999999999E+6144", "1E-6176"])))
    if kind == 1:  # exactly a double (if it fits in 34 digits) or the double's shortest repr
        f = draw(st.floats(allow_nan=False, allow_infinity=False))
        exact = decimal.Decimal(f)
        text = str(exact) if len(exact.as_tuple().digits) <= 34 else repr(f)
        return Decimal128(text)
    if kind == 2:  # an integer, possibly beyond 2^53
        return Decimal128(str(draw(st.integers(-10**20, 10**20))))
    sign = draw(st.integers(0, 1))
    coefficient = draw(st.integers(0, 10**34 - 1))
    exponent = draw(st.one_of(st.integers(-40, 20), st.integers(-6176, 6111)))
    return Decimal128(decimal.Decimal((sign, tuple(int(c) for c in str(coefficient)), exponent)))


NUMBERS = st.one_of(INT32, INT64, DOUBLES, decimal128s())
STRINGS = st.one_of(st.text(max_size=8), st.text(alphabet="\x00a\x01\xff", max_size=5), st.text(alphabet=st.characters(codec="utf-8"), max_size=4))
OBJECT_IDS = st.binary(min_size=12, max_size=12).map(ObjectId)
DATES = st.one_of(
    st.datetimes(min_value=datetime.datetime(1, 1, 1), max_value=datetime.datetime(9999, 12, 31)).map(
        lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)),
    st.integers(-2**63, 2**63 - 1).map(DatetimeMS),
)
TIMESTAMPS = st.builds(Timestamp, st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
BINARIES = st.one_of(
    st.binary(max_size=6),
    st.builds(Binary, st.binary(max_size=6), st.sampled_from([0, 1, 3, 4, 5, 0x80, 0xFF])),
)
REGEXES = st.builds(Regex, st.text(max_size=4), st.text(alphabet="imsux", max_size=3).map(lambda f: "".join(sorted(set(f)))))
SINGLETONS = st.sampled_from([None, MinKey(), MaxKey(), Undefined(), True, False])
CODES = st.one_of(st.builds(Code, st.text(max_size=4)), st.builds(Code, st.text(max_size=4), st.dictionaries(st.text(max_size=2), INT32, max_size=2)))
DBREFS = st.builds(DBRef, st.text(max_size=3), INT32)

SCALARS = st.one_of(NUMBERS, STRINGS, OBJECT_IDS, DATES, TIMESTAMPS, BINARIES, REGEXES, SINGLETONS, CODES, DBREFS)
FIELD_NAMES = st.text(alphabet="ab\x01é", min_size=0, max_size=3)


def bson_values(max_leaves: int = 12) -> st.SearchStrategy:
    """Any BSON value, including nested documents and arrays."""
    return st.recursive(
        SCALARS,
        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(FIELD_NAMES, inner, max_size=4)),
        max_leaves=max_leaves,
    )


def _pairs(s: st.SearchStrategy) -> st.SearchStrategy:
    return st.tuples(s, s)


def same_bracket_pairs() -> st.SearchStrategy:
    """Two values of one type bracket (cross-bracket pairs are the easy case)."""
    small = bson_values(6)
    return st.one_of(
        _pairs(NUMBERS), _pairs(STRINGS), _pairs(OBJECT_IDS), _pairs(DATES), _pairs(TIMESTAMPS),
        _pairs(BINARIES), _pairs(REGEXES), _pairs(CODES),
        _pairs(st.lists(small, max_size=3)), _pairs(st.dictionaries(FIELD_NAMES, small, max_size=3)),
    )


@st.composite
def equal_numbers(draw) -> list:
    """One integer value as int32/Int64/double/Decimal128 (only the representations that are exact)."""
    n = draw(st.one_of(st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1)))
    reps: list = [Int64(n), Decimal128(str(n)), Decimal128(f"{n}.000")]
    if -2**31 <= n < 2**31:
        reps.append(n)
    if float(n) == n:
        reps.append(float(n))
    return reps
