"""$size, $all and $elemMatch."""
from bson.dbref import DBRef
from bson.regex import Regex
from matchkit import compile_error, matches


def test_size_matches_arrays_of_that_length():
    assert matches({"a": {"$size": 2}}, {"a": [1, [2, 3]]})
    assert not matches({"a": {"$size": 2}}, {"a": [1]})
    assert matches({"a": {"$size": 0}}, {"a": []})


def test_size_never_matches_non_arrays_or_nested_arrays():
    assert not matches({"a": {"$size": 1}}, {"a": "x"})
    assert not matches({"a": {"$size": 0}}, {})
    assert not matches({"a": {"$size": 2}}, {"a": [[1, 2]]})


def test_size_through_arrays_of_documents():
    assert matches({"a.b": {"$size": 2}}, {"a": [{"b": [1]}, {"b": [1, 2]}]})


def test_size_accepts_integral_numbers():
    assert matches({"a": {"$size": 2.0}}, {"a": [1, 2]})


def test_size_errors():
    assert compile_error({"a": {"$size": "2"}}) == (
        2, 'Failed to parse $size. Expected a number in: $size: "2"')
    assert compile_error({"a": {"$size": -1}}) == (
        2, "Failed to parse $size. Expected a positive number in: $size: -1")
    assert compile_error({"a": {"$size": 1.5}}) == (
        2, "Failed to parse $size. Expected an integer: $size: 1.5")
    assert compile_error({"a": {"$size": {"$gte": 3.0}}}) == (
        2, "Failed to parse $size. Expected a number in: $size: { $gte: 3.0 }")
    assert compile_error({"a": {"$size": 2**40}}) == (
        2, "Failed to parse $size. Cannot represent $size: 1099511627776 in an int")


def test_all_requires_every_value():
    assert matches({"a": {"$all": [1, 2]}}, {"a": [2, 3, 1]})
    assert not matches({"a": {"$all": [1, 2]}}, {"a": [1, 3]})
    assert matches({"a": {"$all": [1]}}, {"a": 1})


def test_all_with_array_value_matches_nested_or_whole_array():
    assert matches({"a": {"$all": [[1, 2]]}}, {"a": [1, 2]})
    assert matches({"a": {"$all": [[1, 2]]}}, {"a": [[1, 2], 3]})


def test_empty_all_matches_nothing():
    assert not matches({"a": {"$all": []}}, {"a": []})
    assert not matches({"a": {"$all": []}}, {"a": [1]})


def test_all_with_regexes():
    assert matches({"a": {"$all": [Regex("^x"), Regex("y$")]}}, {"a": ["xa", "by"]})
    assert not matches({"a": {"$all": [Regex("^x"), Regex("y$")]}}, {"a": ["xa"]})


def test_all_with_elem_match_needs_each_condition():
    spec = {"a": {"$all": [{"$elemMatch": {"b": 1}}, {"$elemMatch": {"c": {"$gt": 1}}}]}}
    assert matches(spec, {"a": [{"b": 1}, {"c": 2}]})
    assert not matches(spec, {"a": [{"b": 1}, {"c": 1}]})


def test_all_errors():
    assert compile_error({"a": {"$all": 1}}) == (2, "$all needs an array")
    assert compile_error({"a": {"$all": [{"$gt": 1}]}}) == (2, "no $ expressions in $all")
    assert compile_error({"a": {"$all": [{"$elemMatch": {"b": 1}}, 5]}}) == (
        2, "$all/$elemMatch has to be consistent")


def test_all_treats_unknown_dollar_documents_as_values():
    assert matches({"a": {"$all": [{"$x": 1}]}}, {"a": [{"$x": 1}]})


def test_elem_match_value_form_needs_one_element_satisfying_all():
    spec = {"a": {"$elemMatch": {"$gt": 1, "$lt": 3}}}
    assert matches(spec, {"a": [0, 2]})
    assert not matches(spec, {"a": [0, 5]})
    assert not matches(spec, {"a": 2})


def test_elem_match_value_form_does_not_descend_nested_arrays():
    assert not matches({"a": {"$elemMatch": {"$gt": 1}}}, {"a": [[5]]})
    assert matches({"a": {"$elemMatch": {"$elemMatch": {"$gt": 1}}}}, {"a": [[5]]})


def test_elem_match_value_form_with_other_operators():
    assert matches({"a": {"$elemMatch": {"$regex": "^x", "$options": "i"}}}, {"a": ["y", "Xa"]})
    assert matches({"a": {"$elemMatch": {"$not": {"$gt": 5}}}}, {"a": [9, 2]})
    assert matches({"a": {"$elemMatch": {"$in": [3, 4]}}}, {"a": [1, 4]})
    assert matches({"a": {"$elemMatch": {"$size": 2}}}, {"a": [[1, 2]]})
    assert matches({"a": {"$elemMatch": {"$exists": True}}}, {"a": [1]})
    assert not matches({"a": {"$elemMatch": {"$exists": False}}}, {"a": [1]})


def test_elem_match_object_form_needs_one_document_satisfying_all():
    spec = {"a": {"$elemMatch": {"b": 1, "c": 2}}}
    assert matches(spec, {"a": [{"b": 1, "c": 2}]})
    assert not matches(spec, {"a": [{"b": 1}, {"c": 2}]})


def test_elem_match_object_form_with_logical_operators():
    spec = {"a": {"$elemMatch": {"$or": [{"b": 1}, {"c": 1}]}}}
    assert matches(spec, {"a": [{"c": 1}]})
    assert not matches(spec, {"a": [{"d": 1}]})


def test_elem_match_object_form_sees_nested_arrays_as_documents():
    assert matches({"a": {"$elemMatch": {"0": 1}}}, {"a": [[1, 2]]})
    assert not matches({"a": {"$elemMatch": {"b": 1}}}, {"a": [1]})


def test_elem_match_empty_object_matches_any_document_element():
    assert matches({"a": {"$elemMatch": {}}}, {"a": [1, {}]})
    assert not matches({"a": {"$elemMatch": {}}}, {"a": [1, 2]})


def test_elem_match_on_dbrefs():
    assert matches({"a": {"$elemMatch": {"$ref": "c", "$id": 2}}}, {"a": [DBRef("c", 1), DBRef("c", 2)]})
    assert not matches({"a": {"$elemMatch": {"$ref": "c", "$id": 3}}}, {"a": [DBRef("c", 1)]})


def test_elem_match_through_dotted_path():
    spec = {"a.b": {"$elemMatch": {"$gte": 5}}}
    assert matches(spec, {"a": [{"b": [1]}, {"b": [7]}]})
    assert not matches(spec, {"a": [{"b": 7}]})


def test_elem_match_nested_in_array_of_arrays_only_looks_at_outer_array():
    assert not matches({"a": {"$elemMatch": {"$eq": 1}}}, {"a": [[1]]})


def test_elem_match_errors():
    assert compile_error({"a": {"$elemMatch": 1}}) == (2, "$elemMatch needs an Object")
    assert compile_error({"a": {"$elemMatch": {"$foo": 1}}}) == (2, "unknown operator: $foo")
    assert compile_error({"a": {"$elemMatch": {"$expr": {"$eq": [1, 1]}}}}) == (
        2, "$expr can only be applied to the top-level document")
    assert compile_error({"a": {"$elemMatch": {"$gt": 1, "b": 1}}}) == (2, "unknown operator: b")
