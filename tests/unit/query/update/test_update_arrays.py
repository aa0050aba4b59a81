"""Array modifiers: $push (+ $each $slice $sort $position), $addToSet, $pop, $pull, $pullAll."""
from __future__ import annotations

import pytest
from bson.int64 import Int64

from ginkgodb.errors import CommandError
from ginkgodb.query.update import compile_update


def apply(spec, doc, **kw):
    return compile_update(spec).apply(doc, **kw)


def error(spec, doc) -> CommandError:
    with pytest.raises(CommandError) as info:
        compile_update(spec).apply(doc)
    return info.value


def compile_error(spec) -> CommandError:
    with pytest.raises(CommandError) as info:
        compile_update(spec)
    return info.value


def test_push_appends_one_value():
    assert apply({"$push": {"a": 3}}, {"_id": 1, "a": [1, 2]}) == {"_id": 1, "a": [1, 2, 3]}


def test_push_array_value_appends_it_as_one_element():
    assert apply({"$push": {"a": [3, 4]}}, {"_id": 1, "a": []}) == {"_id": 1, "a": [[3, 4]]}


def test_push_to_missing_field_creates_array():
    assert apply({"$push": {"a.b": 1}}, {"_id": 1}) == {"_id": 1, "a": {"b": [1]}}


def test_push_to_non_array_is_bad_value():
    err = error({"$push": {"a": 1}}, {"_id": 1, "a": 5})
    assert err.code == 2
    assert err.errmsg == "The field 'a' must be an array but is of type int in document {_id: 1}"


def test_push_each_appends_all():
    out = apply({"$push": {"a": {"$each": [3, 4]}}}, {"_id": 1, "a": [1]})
    assert out["a"] == [1, 3, 4]


def test_push_each_empty_on_existing_array_is_a_no_op():
    doc = {"_id": 1, "a": [1]}
    assert apply({"$push": {"a": {"$each": []}}}, doc) is doc


def test_push_each_empty_on_missing_field_creates_empty_array():
    assert apply({"$push": {"a": {"$each": []}}}, {"_id": 1}) == {"_id": 1, "a": []}


@pytest.mark.parametrize("position, expected", [
    (0, [9, 8, 1, 2, 3]),
    (1, [1, 9, 8, 2, 3]),
    (3, [1, 2, 3, 9, 8]),
    (10, [1, 2, 3, 9, 8]),
    (-1, [1, 2, 9, 8, 3]),
    (-2, [1, 9, 8, 2, 3]),
    (-3, [9, 8, 1, 2, 3]),
    (-10, [9, 8, 1, 2, 3]),
])
def test_push_position_inserts_at_index_or_from_the_end(position, expected):
    out = apply({"$push": {"a": {"$each": [9, 8], "$position": position}}}, {"_id": 1, "a": [1, 2, 3]})
    assert out["a"] == expected


@pytest.mark.parametrize("slice_, expected", [
    (2, [1, 2]), (-2, [3, 4]), (0, []), (10, [1, 2, 3, 4]), (2.0, [1, 2]),
])
def test_push_slice_keeps_first_or_last_elements(slice_, expected):
    out = apply({"$push": {"a": {"$each": [4], "$slice": slice_}}}, {"_id": 1, "a": [1, 2, 3]})
    assert out["a"] == expected


def test_push_sort_whole_values_ascending_and_descending():
    out = apply({"$push": {"a": {"$each": [2], "$sort": 1}}}, {"_id": 1, "a": [3, "x", 1]})
    assert out["a"] == [1, 2, 3, "x"]
    out = apply({"$push": {"a": {"$each": [], "$sort": -1}}}, {"_id": 1, "a": [3, 1, 2]})
    assert out["a"] == [3, 2, 1]


def test_push_sort_by_embedded_field_treats_missing_as_null():
    docs = [{"s": 3}, {"s": 1}, {"t": 0}, {"s": 2}]
    out = apply({"$push": {"a": {"$each": [], "$sort": {"s": 1}}}}, {"_id": 1, "a": docs})
    assert out["a"] == [{"t": 0}, {"s": 1}, {"s": 2}, {"s": 3}]


def test_push_sort_by_dotted_field_descending():
    docs = [{"x": {"y": 1}}, {"x": {"y": 5}}]
    out = apply({"$push": {"a": {"$each": [{"x": {"y": 3}}], "$sort": {"x.y": -1}}}},
                {"_id": 1, "a": docs})
    assert [d["x"]["y"] for d in out["a"]] == [5, 3, 1]


def test_push_sort_then_slice():
    out = apply({"$push": {"a": {"$each": [5, 0], "$sort": 1, "$slice": 3}}},
                {"_id": 1, "a": [4, 2]})
    assert out["a"] == [0, 2, 4]


@pytest.mark.parametrize("clause, message", [
    ({"$each": 1}, "The argument to $each in $push must be an array but it was of type: int"),
    ({"$each": [], "$foo": 1}, "Unrecognized clause in $push: $foo"),
    ({"$each": [], "$slice": "x"},
     "The value for $slice must be an integer value but was given type: string"),
    ({"$each": [], "$slice": 1.5},
     "The value for $slice must be an integer value but was given type: double"),
    ({"$each": [], "$position": "x"},
     "The value for $position must be an integer value, not of type: string"),
    ({"$each": [], "$sort": 2}, "The $sort element value must be either 1 or -1"),
    ({"$each": [], "$sort": {}}, "The $sort pattern is empty when it should be a set of fields."),
    ({"$each": [], "$sort": {"a": 0}}, "The $sort element value must be either 1 or -1"),
    ({"$each": [], "$sort": {"a..b": 1}},
     "The $sort field is a dotted field but has an empty part: a..b"),
    ({"$each": [], "$sort": "x"}, "The $sort is invalid: use 1/-1 to sort the whole element, "
                                  "or {field:1/-1} to sort embedded fields"),
])
def test_push_clause_errors(clause, message):
    err = compile_error({"$push": {"a": clause}})
    assert (err.code, err.errmsg) == (2, message)


def test_push_document_without_each_is_pushed_as_is():
    out = apply({"$push": {"a": {"$slice": 1}}}, {"_id": 1, "a": []})
    assert out["a"] == [{"$slice": 1}]


def test_add_to_set_appends_only_missing_values():
    out = apply({"$addToSet": {"a": {"$each": [1, 4, 4, 5]}}}, {"_id": 1, "a": [1, 2]})
    assert out["a"] == [1, 2, 4, 5]


def test_add_to_set_existing_value_is_a_no_op_even_across_numeric_types():
    doc = {"_id": 1, "a": [1, 2]}
    assert apply({"$addToSet": {"a": Int64(2)}}, doc) is doc


def test_add_to_set_document_equality_depends_on_field_order():
    out = apply({"$addToSet": {"a": {"y": 1, "x": 1}}}, {"_id": 1, "a": [{"x": 1, "y": 1}]})
    assert len(out["a"]) == 2


def test_add_to_set_creates_deduplicated_array():
    assert apply({"$addToSet": {"a": {"$each": [1, 1, 2]}}}, {"_id": 1}) == {"_id": 1, "a": [1, 2]}


def test_add_to_set_on_non_array_is_bad_value():
    err = error({"$addToSet": {"a.b": 1}}, {"_id": 1, "a": {"b": 1}})
    assert (err.code, err.errmsg) == (2, "Cannot apply $addToSet to non-array field. Field named "
                                         "'b' has non-array type int")


def test_add_to_set_each_must_be_array_and_alone():
    err = compile_error({"$addToSet": {"a": {"$each": 1}}})
    assert (err.code, err.errmsg) == (14, "The argument to $each in $addToSet must be an array "
                                          "but it was of type int")
    err = compile_error({"$addToSet": {"a": {"$each": [], "b": 1}}})
    assert err.errmsg == "Found unexpected fields after $each in $addToSet: { $each: [], b: 1 }"


def test_add_to_set_each_not_first_adds_the_document():
    out = apply({"$addToSet": {"a": {"b": 1, "$each": [2]}}}, {"_id": 1, "a": []})
    assert out["a"] == [{"b": 1, "$each": [2]}]


def test_pop_last_and_first():
    assert apply({"$pop": {"a": 1}}, {"_id": 1, "a": [1, 2, 3]})["a"] == [1, 2]
    assert apply({"$pop": {"a": -1}}, {"_id": 1, "a": [1, 2, 3]})["a"] == [2, 3]


def test_pop_empty_or_missing_is_a_no_op():
    for doc in ({"_id": 1, "a": []}, {"_id": 1}, {"_id": 1, "a": {"b": 1}}):
        assert apply({"$pop": {"a.c" if "a" in doc and doc["a"] else "a": 1}}, doc) is doc


def test_pop_on_non_array_is_type_mismatch():
    err = error({"$pop": {"a": 1}}, {"_id": 1, "a": 1})
    assert (err.code, err.errmsg) == (14, "Path 'a' contains an element of non-array type 'int'")


def test_pop_through_scalar_is_path_not_viable():
    err = error({"$pop": {"a.b": 1}}, {"_id": 1, "a": 1})
    assert (err.code, err.errmsg) == (28, "Cannot use the part (b) of (a.b) to traverse the "
                                          "element ({a: 1})")


@pytest.mark.parametrize("value, message", [
    (2, "$pop expects 1 or -1, found: 2"),
    ("x", 'Expected a number in: a: "x"'),
    (1.5, "Expected an integer: a: 1.5"),
])
def test_pop_argument_errors(value, message):
    err = compile_error({"$pop": {"a": value}})
    assert (err.code, err.errmsg) == (9, message)


def test_pull_all_removes_every_listed_value():
    out = apply({"$pullAll": {"a": [1, "x"]}}, {"_id": 1, "a": [1, 2, 1.0, "x", 3]})
    assert out["a"] == [2, 3]


def test_pull_all_requires_array():
    err = compile_error({"$pullAll": {"a": 1}})
    assert (err.code, err.errmsg) == (2, "$pullAll requires an array argument but was given a int")


def test_pull_scalar_value_removes_equal_elements():
    out = apply({"$pull": {"a": 2}}, {"_id": 1, "a": [1, 2, 2.0, [2], 3]})
    assert out["a"] == [1, [2], 3]


def test_pull_array_value_removes_equal_arrays_only():
    out = apply({"$pull": {"a": [1, 2]}}, {"_id": 1, "a": [[1, 2], [2, 1], 1]})
    assert out["a"] == [[2, 1], 1]


def test_pull_nothing_matching_is_a_no_op():
    doc = {"_id": 1, "a": [1, 2]}
    assert apply({"$pull": {"a": 5}}, doc) is doc


def test_pull_on_non_array_is_bad_value():
    err = error({"$pull": {"a": 1}}, {"_id": 1, "a": 1})
    assert (err.code, err.errmsg) == (2, "Cannot apply $pull to a non-array value")


def test_pull_missing_field_is_a_no_op():
    doc = {"_id": 1}
    assert apply({"$pull": {"a": 1}}, doc) is doc
