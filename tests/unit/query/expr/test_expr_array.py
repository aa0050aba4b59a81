"""Array, set and per-element operators."""
import pytest
from exprkit import code_of, ev

from ginkgodb.query.expr import MISSING


def test_size_element_access_first_last():
    doc = {"a": [1, 2, 3]}
    assert ev({"$size": "$a"}, doc) == 3
    assert ev({"$arrayElemAt": ["$a", -1]}, doc) == 3
    assert ev({"$arrayElemAt": ["$a", 9]}, doc) is MISSING
    assert ev({"$first": "$a"}, doc) == 1 and ev({"$last": "$a"}, doc) == 3
    assert ev({"$first": "$nope"}) is None
    assert code_of({"$size": "$nope"}) == 17124
    assert code_of({"$arrayElemAt": [[1], 0.5]}) == 28691


def test_in_and_index_of_array():
    assert ev({"$in": [2, [1, 2.0]]}) is True
    assert code_of({"$in": [1, "$nope"]}) == 40081
    assert ev({"$indexOfArray": [[1, 2, 1], 1, 1]}) == 2
    assert ev({"$indexOfArray": [None, 1]}) is None


def test_slice_forms():
    assert ev({"$slice": [[1, 2, 3, 4], 2]}) == [1, 2]
    assert ev({"$slice": [[1, 2, 3, 4], -2]}) == [3, 4]
    assert ev({"$slice": [[1, 2, 3, 4], 1, 2]}) == [2, 3]
    assert ev({"$slice": [[1, 2, 3, 4], -3, 2]}) == [2, 3]
    assert code_of({"$slice": [[1], 0, 0]}) == 28729


def test_concat_reverse_range():
    assert ev({"$concatArrays": [[1], [2, 3]]}) == [1, 2, 3]
    assert ev({"$concatArrays": [[1], None]}) is None
    assert ev({"$reverseArray": [[1, 2]]}) == [2, 1]
    assert ev({"$range": [0, 10, 3]}) == [0, 3, 6, 9]
    assert ev({"$range": [5, 0, -2]}) == [5, 3, 1]
    assert code_of({"$range": [0, 5, 0]}) == 34449


def test_map_filter_reduce_bind_variables():
    doc = {"a": [1, 2, 3, 4]}
    assert ev({"$map": {"input": "$a", "as": "x", "in": {"$multiply": ["$$x", 10]}}}, doc) == \
        [10, 20, 30, 40]
    assert ev({"$filter": {"input": "$a", "cond": {"$gt": ["$$this", 2]}}}, doc) == [3, 4]
    assert ev({"$filter": {"input": "$a", "cond": True, "limit": 2}}, doc) == [1, 2]
    assert ev({"$reduce": {"input": "$a", "initialValue": 0,
                           "in": {"$add": ["$$value", "$$this"]}}}, doc) == 10
    assert ev({"$map": {"input": "$nope", "in": 1}}) is None


def test_per_element_operator_errors():
    assert code_of({"$map": {"input": 1, "in": 1}}) == 16883
    assert code_of({"$map": {"in": 1}}) == 16880
    assert code_of({"$filter": {"input": [1]}}) == 28650
    assert code_of({"$reduce": {"input": [1], "in": 1}}) == 40078


def test_zip():
    assert ev({"$zip": {"inputs": [[1, 2], ["a"]]}}) == [[1, "a"]]
    assert ev({"$zip": {"inputs": [[1, 2], ["a"]], "useLongestLength": True,
                        "defaults": [0, "z"]}}) == [[1, "a"], [2, "z"]]
    assert code_of({"$zip": {"inputs": [[1]], "defaults": [1]}}) == 34466


def test_sort_array_by_value_and_by_field():
    assert ev({"$sortArray": {"input": [3, 1, "a", None], "sortBy": 1}}) == [None, 1, 3, "a"]
    docs = [{"k": 2}, {"k": 1}]
    assert ev({"$sortArray": {"input": docs, "sortBy": {"k": -1}}}) == [{"k": 2}, {"k": 1}]


def test_object_array_conversions():
    assert ev({"$objectToArray": {"a": 1}}) == [{"k": "a", "v": 1}]
    assert ev({"$arrayToObject": [[["a", 1], ["b", 2]]]}) == {"a": 1, "b": 2}
    assert ev({"$arrayToObject": [[{"k": "a", "v": 1}]]}) == {"a": 1}
    assert code_of({"$arrayToObject": [[1]]}) == 40398


def test_any_all_elements_true():
    assert ev({"$anyElementTrue": [[0, None, 1]]}) is True
    assert ev({"$allElementsTrue": [[1, []]]}) is True
    assert code_of({"$allElementsTrue": [1]}) == 17040


def test_set_operators_use_value_equality():
    assert ev({"$setUnion": [[1, 2], [2.0, 3]]}) == [1, 2, 3]
    assert ev({"$setIntersection": [[1, 2], [2]]}) == [2]
    assert ev({"$setDifference": [[1, 2, 2], [1]]}) == [2]
    assert ev({"$setEquals": [[1, 2], [2, 1, 1]]}) is True
    assert ev({"$setIsSubset": [[1], [1, 2]]}) is True
    assert ev({"$setUnion": [[1], None]}) is None


@pytest.mark.parametrize("spec,code", [
    ({"$setUnion": [[1], 1]}, 17043), ({"$setEquals": [[1]]}, 17045),
    ({"$setIsSubset": [1, [1]]}, 17046), ({"$setDifference": [[1], 1]}, 17049),
])
def test_set_errors(spec, code):
    assert code_of(spec) == code
