"""$inc / $mul / $min / $max / $bit: BSON numeric type promotion and errors."""
from __future__ import annotations

import pytest
from bson.decimal128 import Decimal128
from bson.int64 import Int64

from ginkgodb.errors import CommandError
from ginkgodb.query.update import compile_update

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def apply(spec, doc, **kw):
    return compile_update(spec).apply(doc, **kw)


def error(spec, doc) -> CommandError:
    with pytest.raises(CommandError) as info:
        compile_update(spec).apply(doc)
    return info.value


@pytest.mark.parametrize("start, by, expected, kind", [
    (1, 2, 3, int),
    (1, Int64(2), 3, Int64),
    (Int64(1), 2, 3, Int64),
    (1, 2.5, 3.5, float),
    (1.5, 1, 2.5, float),
    (1, Decimal128("2.5"), Decimal128("3.5"), Decimal128),
    (2.5, Decimal128("1"), Decimal128("3.50000000000000"), Decimal128),
])
def test_inc_result_type_follows_promotion_order(start, by, expected, kind):
    out = apply({"$inc": {"a": by}}, {"_id": 1, "a": start})
    assert type(out["a"]) is kind
    assert str(out["a"]) == str(expected)


def test_inc_int32_overflow_becomes_int64():
    out = apply({"$inc": {"a": 1}}, {"_id": 1, "a": INT32_MAX})
    assert out["a"] == INT32_MAX + 1 and type(out["a"]) is Int64


def test_inc_int64_overflow_is_bad_value():
    err = error({"$inc": {"a": 1}}, {"_id": 1, "a": Int64(INT64_MAX)})
    assert err.code == 2
    assert err.errmsg == ("Failed to apply $inc operations to current value "
                          f"((NumberLong){INT64_MAX}) for document {{_id: 1}}")


def test_inc_int32_by_int64_max_overflow_names_number_int():
    err = error({"$inc": {"a": Int64(INT64_MAX)}}, {"_id": "x", "a": 42})
    assert err.errmsg == ('Failed to apply $inc operations to current value ((NumberInt)42) '
                          'for document {_id: "x"}')


def test_inc_missing_field_creates_it_with_the_operand():
    out = apply({"$inc": {"a.b": Int64(5)}}, {"_id": 1})
    assert out == {"_id": 1, "a": {"b": 5}} and type(out["a"]["b"]) is Int64


def test_inc_by_zero_is_a_no_op():
    doc = {"_id": 1, "a": 5}
    assert apply({"$inc": {"a": 0}}, doc) is doc


def test_inc_by_zero_double_on_int_is_a_modification():
    out = apply({"$inc": {"a": 0.0}}, {"_id": 1, "a": 5})
    assert type(out["a"]) is float


def test_inc_non_numeric_field_is_type_mismatch():
    err = error({"$inc": {"a": 1}}, {"_id": 1, "a": "x"})
    assert err.code == 14
    assert err.errmsg == ("Cannot apply $inc to a value of non-numeric type. {_id: 1} has the "
                          "field 'a' of non-numeric type string")


def test_inc_message_names_the_last_path_part():
    err = error({"$inc": {"a.b": 1}}, {"_id": 1, "a": {"b": None}})
    assert "has the field 'b' of non-numeric type null" in err.errmsg


def test_inc_non_numeric_argument_is_type_mismatch():
    with pytest.raises(CommandError) as info:
        compile_update({"$inc": {"a": "1"}})
    assert info.value.code == 14
    assert info.value.errmsg == 'Cannot increment with non-numeric argument: {a: "1"}'


def test_mul_non_numeric_argument_message():
    with pytest.raises(CommandError) as info:
        compile_update({"$mul": {"a": True}})
    assert info.value.errmsg == "Cannot multiply with non-numeric argument: {a: true}"


def test_mul_multiplies_and_promotes():
    assert apply({"$mul": {"a": 2}}, {"_id": 1, "a": 3}) == {"_id": 1, "a": 6}
    out = apply({"$mul": {"a": 2}}, {"_id": 1, "a": 2**30 * 3})
    assert type(out["a"]) is Int64


def test_mul_missing_field_creates_zero_of_operand_type():
    out = apply({"$mul": {"a": Int64(7), "b": 2.5, "c": 3}}, {"_id": 1})
    assert type(out["a"]) is Int64 and out["a"] == 0
    assert type(out["b"]) is float and out["b"] == 0.0
    assert type(out["c"]) is int and out["c"] == 0


def test_mul_by_one_is_a_no_op():
    doc = {"_id": 1, "a": 4}
    assert apply({"$mul": {"a": 1}}, doc) is doc


def test_min_replaces_only_when_smaller():
    assert apply({"$min": {"a": 1}}, {"_id": 1, "a": 5}) == {"_id": 1, "a": 1}
    doc = {"_id": 1, "a": 5}
    assert apply({"$min": {"a": 9}}, doc) is doc


def test_max_compares_across_types_by_bson_order():
    assert apply({"$max": {"a": "x"}}, {"_id": 1, "a": 100}) == {"_id": 1, "a": "x"}
    doc = {"_id": 1, "a": "x"}
    assert apply({"$max": {"a": 100}}, doc) is doc


def test_min_equal_values_of_other_type_are_a_no_op():
    doc = {"_id": 1, "a": 1}
    assert apply({"$min": {"a": 1.0}}, doc) is doc


def test_max_missing_field_is_created():
    assert apply({"$max": {"a": 3}}, {"_id": 1}) == {"_id": 1, "a": 3}


def test_bit_and_or_xor():
    out = apply({"$bit": {"a": {"and": 10}, "b": {"or": 5}, "c": {"xor": 5}}},
                {"_id": 1, "a": 13, "b": 3, "c": 1})
    assert out == {"_id": 1, "a": 8, "b": 7, "c": 4}


def test_bit_with_int64_operand_gives_int64():
    out = apply({"$bit": {"a": {"or": Int64(1)}}}, {"_id": 1, "a": 2})
    assert out["a"] == 3 and type(out["a"]) is Int64


def test_bit_on_missing_field_starts_from_zero():
    assert apply({"$bit": {"a": {"or": 6}}}, {"_id": 1}) == {"_id": 1, "a": 6}


def test_bit_on_double_is_bad_value():
    err = error({"$bit": {"a": {"and": 1}}}, {"_id": 1, "a": 1.5})
    assert err.code == 2
    assert err.errmsg == ("Cannot apply $bit to a value of non-integral type._id: 1 has the "
                          "field a of non-integer type double")


@pytest.mark.parametrize("spec, message", [
    ({"a": 1}, "The $bit modifier is not compatible with a int. You must pass in an embedded "
               "document: {$bit: {field: {and/or/xor: #}}"),
    ({"a": {"nand": 1}}, "The $bit modifier only supports 'and', 'or', and 'xor', not 'nand' "
                         "which is an unknown operator: {nand: 1}"),
    ({"a": {"and": 1.0}}, "The $bit modifier field must be an Integer(32/64 bit); a 'double' is "
                          "not supported here: {and: 1.0}"),
    ({"a": {}}, "You must pass in at least one bitwise operation. The format is: "
                "{$bit: {field: {and/or/xor: #}}"),
])
def test_bit_argument_errors(spec, message):
    with pytest.raises(CommandError) as info:
        compile_update({"$bit": spec})
    assert (info.value.code, info.value.errmsg) == (2, message)
