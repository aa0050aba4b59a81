"""The key codec's contract: byte order is compare() order, equal values share bytes, round trip."""
from __future__ import annotations

from functools import cmp_to_key

from hypothesis import given, settings
from hypothesis import strategies as st

from ginkgodb.bsonutil.compare import compare
from ginkgodb.bsonutil.keycodec import decode_key, decode_value, encode_key, encode_value, hash_value
from tests.strategies import NUMBERS, bson_values, equal_numbers, same_bracket_pairs


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def _byte_cmp(a: bytes, b: bytes) -> int:
    return (a > b) - (a < b)


@settings(max_examples=600)
@given(same_bracket_pairs())
def test_byte_order_equals_compare_order_within_a_bracket(pair):
    a, b = pair
    assert _byte_cmp(encode_value(a), encode_value(b)) == _sign(compare(a, b))


@settings(max_examples=300)
@given(bson_values(), bson_values())
def test_byte_order_equals_compare_order_for_any_values(a, b):
    assert _byte_cmp(encode_value(a), encode_value(b)) == _sign(compare(a, b))


@settings(max_examples=200)
@given(st.lists(bson_values(6), max_size=12))
def test_sorting_by_bytes_sorts_by_compare(values):
    by_bytes = sorted(values, key=encode_value)
    for x, y in zip(by_bytes, by_bytes[1:]):
        assert compare(x, y) <= 0


@given(equal_numbers())
def test_equal_numbers_encode_identically_across_types(representations):
    assert len({encode_value(v) for v in representations}) == 1


@given(NUMBERS, NUMBERS)
def test_numbers_that_compare_equal_share_bytes(a, b):
    assert (encode_value(a) == encode_value(b)) == (compare(a, b) == 0)


@settings(max_examples=500)
@given(bson_values())
def test_decode_inverts_encode(value):
    decoded = decode_value(encode_value(value))
    assert compare(decoded, value) == 0
    assert encode_value(decoded) == encode_value(value)


@settings(max_examples=500)
@given(same_bracket_pairs())
def test_descending_inversion_reverses_order(pair):
    a, b = pair
    assert _byte_cmp(encode_key([a], [-1]), encode_key([b], [-1])) == -_sign(compare(a, b))


@settings(max_examples=300)
@given(st.lists(st.tuples(bson_values(4), bson_values(4), st.sampled_from([1, -1]), st.sampled_from([1, -1])), min_size=2, max_size=2))
def test_compound_keys_order_lexicographically(rows):
    (a1, a2, d1, d2), (b1, b2, _, _) = rows
    expected = _sign(compare(a1, b1)) * d1 or _sign(compare(a2, b2)) * d2
    assert _byte_cmp(encode_key([a1, a2], [d1, d2]), encode_key([b1, b2], [d1, d2])) == expected


@settings(max_examples=300)
@given(st.lists(bson_values(4), min_size=1, max_size=4), st.data())
def test_compound_keys_decode_with_their_directions(values, data):
    directions = data.draw(st.lists(st.sampled_from([1, -1]), min_size=len(values), max_size=len(values)))
    decoded = decode_key(encode_key(values, directions), directions)
    assert len(decoded) == len(values)
    assert all(compare(x, y) == 0 for x, y in zip(decoded, values))


@given(equal_numbers())
def test_equal_numbers_hash_equally(representations):
    assert len({hash_value(v) for v in representations}) == 1


@given(bson_values())
def test_hash_is_a_signed_int64(value):
    h = hash_value(value)
    assert -2**63 <= h < 2**63


def test_sorting_mixed_values_with_compare_matches_bytes():
    values = [1, "a", None, 2.5, [1], {"a": 1}, True, b"x"]
    assert sorted(values, key=cmp_to_key(compare)) == sorted(values, key=encode_value)
