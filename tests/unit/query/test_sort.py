"""Sort keys: MongoDB's cross-type order, array semantics, validation errors."""
import datetime

import pytest
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.objectid import ObjectId

from ginkgodb.errors import CommandError
from ginkgodb.query.sort import compile_sort


def ids(docs):
    return [d["_id"] for d in docs]


def test_ascending_orders_across_types_by_bracket():
    docs = [{"_id": 1, "a": "x"}, {"_id": 2, "a": 2}, {"_id": 3, "a": None},
            {"_id": 4, "a": {"k": 1}}, {"_id": 5, "a": ObjectId()}, {"_id": 6, "a": True},
            {"_id": 7, "a": datetime.datetime(2020, 1, 1)}]
    assert ids(compile_sort({"a": 1}).sort(docs)) == [3, 2, 1, 4, 5, 6, 7]


def test_numbers_compare_by_value_whatever_their_width():
    docs = [{"_id": 1, "a": 2.5}, {"_id": 2, "a": Int64(2)}, {"_id": 3, "a": Decimal128("3")},
            {"_id": 4, "a": 1}, {"_id": 5, "a": float("nan")}]
    assert ids(compile_sort({"a": 1}).sort(docs)) == [5, 4, 2, 1, 3]


def test_missing_and_null_sort_together_and_keep_input_order():
    docs = [{"_id": 1, "a": None}, {"_id": 2}, {"_id": 3, "a": 0}, {"_id": 4, "a": None}]
    assert ids(compile_sort({"a": 1}).sort(docs)) == [1, 2, 4, 3]


def test_array_sorts_by_min_ascending_and_max_descending():
    docs = [{"_id": 1, "a": [1, 10]}, {"_id": 2, "a": 5}, {"_id": 3, "a": [3, 4]}]
    assert ids(compile_sort({"a": 1}).sort(docs)) == [1, 3, 2]
    assert ids(compile_sort({"a": -1}).sort(docs)) == [1, 2, 3]


def test_empty_array_sorts_below_null():
    docs = [{"_id": 1, "a": None}, {"_id": 2, "a": []}, {"_id": 3, "a": 1}]
    assert ids(compile_sort({"a": 1}).sort(docs)) == [2, 1, 3]
    assert ids(compile_sort({"a": -1}).sort(docs)) == [3, 1, 2]


def test_dotted_path_through_array_of_documents():
    docs = [{"_id": 1, "a": [{"b": 7}, {"b": 2}]}, {"_id": 2, "a": {"b": 3}},
            {"_id": 3, "a": [{"c": 1}]}]
    assert ids(compile_sort({"a.b": 1}).sort(docs)) == [3, 1, 2]
    assert ids(compile_sort({"a.b": -1}).sort(docs)) == [1, 2, 3]


def test_compound_sort_with_mixed_directions():
    docs = [{"_id": 1, "a": 1, "b": 1}, {"_id": 2, "a": 1, "b": 2}, {"_id": 3, "a": 0, "b": 0}]
    assert ids(compile_sort({"a": -1, "b": -1}).sort(docs)) == [2, 1, 3]
    assert ids(compile_sort({"a": 1, "b": -1}).sort(docs)) == [3, 2, 1]


def test_keys_are_bytes_comparable_across_documents():
    spec = compile_sort({"a": -1})
    assert spec.key({"a": 2}) < spec.key({"a": 1})
    assert spec.key({"a": 1}) == spec.key({"a": 1.0})


def test_top_keeps_only_k():
    docs = [{"_id": i, "a": (i * 7) % 10} for i in range(10)]
    spec = compile_sort({"a": 1})
    assert spec.top(docs, 3) == spec.sort(docs)[:3]


def test_parallel_arrays_are_rejected():
    with pytest.raises(CommandError) as info:
        compile_sort({"a": 1, "b": 1}).key({"a": [1, 2], "b": [1, 2]})
    assert info.value.code == 2


def test_simple_spec_needs_no_array_handling():
    assert compile_sort({"a": 1}).needs_array_handling is False
    assert compile_sort({"a.b": 1}).needs_array_handling is True


@pytest.mark.parametrize("spec,code", [
    ({}, 15976), ({"a": 0}, 15975), ({"a": 2}, 15975), ({"a": "asc"}, 15974),
    ({"a": True}, 15974), ({"a": {"x": 1}}, 17312), ({"a": {"$meta": "nope"}}, 31138),
    ({"a": {"$meta": "textScore"}}, 40218), ({"$a": 1}, 16410), ({"a..b": 1}, 15998),
    ([("a", 1)], 15973),
])
def test_invalid_specs(spec, code):
    with pytest.raises(CommandError) as info:
        compile_sort(spec)
    assert info.value.code == code


def test_numeric_directions_of_any_width_are_accepted():
    assert compile_sort({"a": 1.0, "b": Int64(-1), "c": Decimal128("1")}).directions == [1, -1, 1]
