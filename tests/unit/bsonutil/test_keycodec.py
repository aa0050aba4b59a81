"""Golden vectors of the persisted key format (docs/design/keycodec.md) and edge cases."""
from __future__ import annotations

import datetime
import math

import pytest
from bson.binary import Binary
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from ginkgodb.bsonutil import types as T
from ginkgodb.bsonutil.keycodec import (
    bracket_max,
    bracket_min,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
    hash_value,
)

GOLDEN = [
    (MinKey(), "05"), (T.Undefined(), "08"), (None, "0a"), (math.nan, "14 01"),
    (-math.inf, "14 02"), (-1.5, "14 04 40 07 ff ff ff ff ff ff 02"),
    (0, "14 04 80 00 00 00 00 00 00 00 02"), (0.1, "14 04 bf b9 99 99 99 99 99 9a 02"), (1, "14 04 bf f0 00 00 00 00 00 00 02"),
    (Int64(1), "14 04 bf f0 00 00 00 00 00 00 02"), (1.0, "14 04 bf f0 00 00 00 00 00 00 02"),
    (Decimal128("1.0"), "14 04 bf f0 00 00 00 00 00 00 02"),
    (2**53 + 1, "14 04 c3 40 00 00 00 00 00 00 03 80 01 02 00"),
    (Decimal128("1E+400"), "14 05 81 91 02 00"), (math.inf, "14 06"),
    ("", "1e 00 00"), ("a\x00b", "1e 61 00 ff 62 00 00"), ({}, "28 00"),
    ({"a": 1}, "28 14 61 00 00 14 04 bf f0 00 00 00 00 00 00 02 00"), ([], "32 00"),
    ([1, "x"], "32 14 04 bf f0 00 00 00 00 00 00 02 1e 78 00 00 00"),
    (Binary(b"\x01", 4), "3c 00 00 00 01 04 01"), (b"\x01\x02", "3c 00 00 00 02 00 01 02"),
    (ObjectId("000102030405060708090a0b"), "46 00 01 02 03 04 05 06 07 08 09 0a 0b"),
    (False, "50 00"), (True, "50 01"),
    (datetime.datetime(1969, 12, 31, 23, 59, 59, 999000), "5a 7f ff ff ff ff ff ff ff"),
    (datetime.datetime(1970, 1, 1), "5a 80 00 00 00 00 00 00 00"),
    (Timestamp(1, 2), "5f 00 00 00 01 00 00 00 02"), (Regex("^a", "i"), "64 5e 61 00 00 69 00 00"),
    (MaxKey(), "f0"),
]


@pytest.mark.parametrize("value,expected", GOLDEN, ids=[repr(v) for v, _ in GOLDEN])
def test_golden_vectors_never_change(value, expected):
    assert encode_value(value).hex(" ") == expected


def test_golden_vectors_are_in_ascending_order():
    encodings = [bytes.fromhex(h) for _, h in GOLDEN]
    assert encodings == sorted(encodings)


def test_descending_component_is_bit_inverted():
    assert encode_key([5, "ab"], [1, -1]).hex(" ") == "14 04 c0 14 00 00 00 00 00 00 02 e1 9e 9d ff ff"


def test_negative_zero_equals_zero():
    assert encode_value(-0.0) == encode_value(0) == encode_value(Decimal128("-0"))


def test_every_nan_is_one_key_below_minus_infinity():
    nans = {encode_value(v) for v in (math.nan, -math.nan, Decimal128("NaN"), Decimal128("-NaN"))}
    assert len(nans) == 1
    assert nans.pop() < encode_value(-math.inf)


def test_int64_beyond_double_precision_stays_exact():
    big = 2**62 + 1
    assert encode_value(Int64(big)) != encode_value(float(big))
    assert encode_value(Int64(big - 1)) < encode_value(Int64(big)) < encode_value(Int64(big + 1))
    assert decode_value(encode_value(Int64(big))) == big


def test_decimal_between_adjacent_doubles_orders_exactly():
    assert encode_value(Decimal128("0.1")) < encode_value(0.1)  # 0.1 as a double is 0.1000...055
    assert encode_value(Decimal128("0.1000000000000000055511151231257827")) < encode_value(0.1)


def test_huge_decimals_sort_between_dbl_max_and_infinity():
    assert encode_value(1.7976931348623157e308) < encode_value(Decimal128("1E+309")) < encode_value(math.inf)
    assert encode_value(-math.inf) < encode_value(Decimal128("-1E+309")) < encode_value(-1.7976931348623157e308)


def test_bracket_bounds_enclose_exactly_their_bracket():
    lo, hi = bracket_min(T.BRACKET_STRING), bracket_max(T.BRACKET_STRING)
    assert lo <= encode_value("") < encode_value("\U0010ffff" * 3) < hi
    assert encode_value(math.inf) < lo
    assert hi <= encode_value({})
    assert encode_value(ObjectId("ff" * 12)) < bracket_max(T.BRACKET_OBJECTID) <= encode_value(False)


def test_decode_key_returns_canonical_types():
    values = [Int64(7), 2.5, Decimal128("1.5"), Decimal128("3"), "s", None]
    assert decode_key(encode_key(values, [1, -1, 1, -1, 1, -1]), [1, -1, 1, -1, 1, -1]) == [7, 2.5, 1.5, 3, "s", None]
    assert decode_value(encode_value(Decimal128("0.1"))) == Decimal128("0.1")


def test_hash_matches_mongod_vectors():
    assert hash_value(42) == -944302157085130861
    assert hash_value("hashthis", seed=1) == 6271151123721111923
    assert hash_value({"a": 1, "b": 2}, seed=1) == -7076810813311352857
    assert hash_value({"a": 2.0**63, "b": math.nan}, seed=1) == 1223292051903137684
    assert hash_value(2.0**63, seed=1) == hash_value(-math.inf, seed=1) == 5744114172487291558
    assert hash_value(math.inf, seed=1) == 1136124329541638701
    assert hash_value(math.nan, seed=1) == hash_value(Int64(0), seed=1) == 5574369198691456941


def test_hash_of_ints_and_strings_in_one_call_equals_the_general_walk():
    """hash_value's direct path (an int64 or a string, the default seed) gives the bytes-by-bytes
    walk's answer, including at the int64 edges, beyond them (clamped) and for non-ASCII text."""
    import hashlib
    import struct

    from ginkgodb.bsonutil import keyhash

    def walked(v):
        h = hashlib.md5(struct.pack("<i", 0))
        keyhash._feed(h, v)
        return struct.unpack("<q", h.digest()[:8])[0]

    values = [0, 1, -1, 42, 2**31, -2**31 - 1, 2**63 - 1, -2**63, Int64(7), Int64(-2**63), 2**63, -2**63 - 1, 10**30,
              "", "hashthis", "a\x00b", "\u00e9t\u00e9", "\U0001f600", "\ud800"]
    for v in values:
        assert hash_value(v) == walked(v), v
    assert hash_value(2**63) == hash_value(2**63 - 1) and hash_value(-2**63 - 1) == hash_value(-2**63)
    assert hash_value(True) == walked(True) != hash_value(1)


def test_hash_truncates_doubles_like_mongod():
    assert hash_value(2.3) == hash_value(2.0) == hash_value(2) == hash_value(Decimal128("2"))
    assert hash_value(-2.7) == hash_value(-2)
