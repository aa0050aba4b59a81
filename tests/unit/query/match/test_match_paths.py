"""Dotted paths: documents, arrays of documents, numeric components, DBRefs."""
from bson.dbref import DBRef
from bson.son import SON
from matchkit import matches

from ginkgodb.query.match import compile_filter


def test_dotted_path_descends_embedded_documents():
    assert matches({"a.b.c": 1}, {"a": {"b": {"c": 1}}})
    assert not matches({"a.b.c": 1}, {"a": {"b": {"c": 2}}})


def test_dotted_path_traverses_arrays_of_documents():
    doc = {"a": [{"b": 1}, {"b": [2, 3]}]}
    assert matches({"a.b": 1}, doc)
    assert matches({"a.b": 3}, doc)
    assert matches({"a.b": [2, 3]}, doc)
    assert not matches({"a.b": 4}, doc)


def test_dotted_path_does_not_traverse_nested_arrays_by_name():
    assert not matches({"a.b": 1}, {"a": [[{"b": 1}]]})


def test_numeric_component_selects_array_index():
    assert matches({"tags.1": "x"}, {"tags": ["a", "x"]})
    assert not matches({"tags.0": "x"}, {"tags": ["a", "x"]})
    assert not matches({"tags.5": "x"}, {"tags": ["a", "x"]})


def test_numeric_component_is_also_a_field_name_in_documents():
    assert matches({"a.1": "x"}, {"a": {"1": "x"}})
    assert matches({"a.1": "x"}, {"a": [{"1": "x"}]})


def test_numeric_component_then_field_in_selected_document():
    assert matches({"a.1.b": 2}, {"a": [{"b": 1}, {"b": 2}]})
    assert not matches({"a.0.b": 2}, {"a": [{"b": 1}, {"b": 2}]})


def test_numeric_component_with_leading_zero_is_not_an_index():
    assert not matches({"a.01": "x"}, {"a": ["y", "x"]})


def test_numeric_component_into_nested_array():
    assert matches({"a.0.1": 5}, {"a": [[4, 5]]})
    assert matches({"a.0.b": 5}, {"a": [[{"b": 5}]]})


def test_scalar_on_the_way_reaches_missing():
    assert matches({"a.b": None}, {"a": 5})
    assert matches({"a.b": None}, {"a": None})
    assert not matches({"a.b": 5}, {"a": 5})


def test_null_through_array_of_scalars_reaches_nothing():
    assert not matches({"a.b": None}, {"a": [1, 2]})
    assert not matches({"a.b": None}, {"a": []})


def test_null_matches_a_document_element_missing_the_field():
    assert matches({"a.b": None}, {"a": [{"b": 1}, {"c": 1}]})
    assert matches({"k.k1.k2": {"$in": [None, 1]}}, {"k": [{"k1": "string"}]})


def test_dbref_fields_are_reachable():
    doc = {"r": DBRef("coll", 5, "db")}
    assert matches({"r.$id": 5}, doc)
    assert matches({"r.$ref": "coll"}, doc)
    assert matches({"r.$db": "db"}, doc)
    assert not matches({"r.$id": 6}, doc)


def test_dbref_in_array_is_reachable():
    assert matches({"refs.$id": 2}, {"refs": [DBRef("c", 1), DBRef("c", 2)]})


def test_other_mappings_are_documents():
    assert matches({"a.b": 1}, {"a": SON([("b", 1)])})
    assert matches({"a.b": 1}, {"a": [SON([("b", 1)])]})


def test_empty_path_component_is_a_field_name():
    assert matches({"a..b": 1}, {"a": {"": {"b": 1}}})


def test_paths_lists_every_referenced_path():
    m = compile_filter({"a": 1, "b.c": {"$gt": 1}, "$or": [{"d": 1}, {"e": {"$not": {"$gt": 1}}}]})
    assert m.paths == {"a", "b.c", "d", "e"}


def test_leaf_array_is_matched_element_wise_and_whole():
    assert matches({"a": {"$gt": 4}}, {"a": [1, 5]})
    assert matches({"a": {"$gt": [1]}}, {"a": [1, 5]})
