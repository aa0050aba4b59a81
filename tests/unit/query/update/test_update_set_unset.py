"""$set / $unset / $setOnInsert: paths, creation order, arrays, no-ops."""
from __future__ import annotations

import pytest
from bson.int64 import Int64

from ginkgodb.errors import CommandError
from ginkgodb.query.update import compile_update


def apply(spec, doc, **kw):
    return compile_update(spec).apply(doc, **kw)


def error(spec, doc, **kw) -> CommandError:
    with pytest.raises(CommandError) as info:
        compile_update(spec).apply(doc, **kw)
    return info.value


def test_set_replaces_value_and_keeps_field_position():
    assert apply({"$set": {"a": 5}}, {"_id": 1, "a": 1, "b": 2}) == {"_id": 1, "a": 5, "b": 2}


def test_set_creates_intermediate_documents():
    assert apply({"$set": {"a.b.c": 1}}, {"_id": 1}) == {"_id": 1, "a": {"b": {"c": 1}}}


def test_new_fields_are_created_in_field_name_order():
    out = apply({"$set": {"z": 1, "b": 2, "a.y": 3, "a.x": 4}}, {"_id": 1})
    assert list(out) == ["_id", "a", "b", "z"]
    assert list(out["a"]) == ["x", "y"]


def test_set_does_not_mutate_input_and_shares_untouched_subdocuments():
    doc = {"_id": 1, "a": {"b": 1}, "keep": {"deep": [1, 2]}}
    out = apply({"$set": {"a.b": 2}}, doc)
    assert doc == {"_id": 1, "a": {"b": 1}, "keep": {"deep": [1, 2]}}
    assert out["keep"] is doc["keep"]


def test_set_numeric_component_indexes_into_array():
    assert apply({"$set": {"a.1": 9}}, {"_id": 1, "a": [1, 2, 3]}) == {"_id": 1, "a": [1, 9, 3]}


def test_set_beyond_array_end_pads_with_nulls():
    assert apply({"$set": {"a.4": 9}}, {"_id": 1, "a": [1]}) == {"_id": 1, "a": [1, None, None, None, 9]}


def test_set_under_padded_index_creates_document():
    assert apply({"$set": {"a.2.b": 1}}, {"_id": 1, "a": []}) == {"_id": 1, "a": [None, None, {"b": 1}]}


def test_set_numeric_component_on_document_is_a_field_name():
    assert apply({"$set": {"a.0": 1}}, {"_id": 1, "a": {}}) == {"_id": 1, "a": {"0": 1}}


def test_set_same_value_is_a_no_op_returning_the_input():
    doc = {"_id": 1, "a": {"b": [1, 2]}}
    plan = compile_update({"$set": {"a": {"b": [1, 2]}}})
    out = plan.apply(doc)
    assert out is doc
    assert not plan.changes(doc, out)


def test_set_equal_value_of_other_type_is_a_modification():
    doc = {"_id": 1, "a": 1}
    plan = compile_update({"$set": {"a": 1.0}})
    out = plan.apply(doc)
    assert plan.changes(doc, out) and type(out["a"]) is float


def test_set_through_scalar_is_path_not_viable():
    err = error({"$set": {"a.b": 1}}, {"_id": 1, "a": 1})
    assert (err.code, err.errmsg) == (28, "Cannot create field 'b' in element {a: 1}")


def test_set_through_array_by_name_is_path_not_viable():
    err = error({"$set": {"a.b": 1}}, {"_id": 1, "a": [{"b": 1.0}]})
    assert err.code == 28
    assert err.errmsg == "Cannot create field 'b' in element {a: [ { b: 1.0 } ]}"


def test_set_through_null_is_path_not_viable():
    err = error({"$set": {"a.b.c": 1}}, {"_id": 1, "a": None})
    assert err.errmsg == "Cannot create field 'b' in element {a: null}"


def test_set_inside_array_element_scalar_names_the_index():
    err = error({"$set": {"a.0.b": 1}}, {"_id": 1, "a": [0]})
    assert err.errmsg == "Cannot create field 'b' in element {0: 0}"


def test_set_of_id_to_other_value_is_immutable_field():
    err = error({"$set": {"_id": 2}}, {"_id": 1})
    assert err.code == 66
    assert err.errmsg == "Performing an update on the path '_id' would modify the immutable field '_id'"


def test_set_of_id_to_same_value_is_allowed():
    doc = {"_id": 1, "a": 1}
    assert apply({"$set": {"_id": 1, "a": 2}}, doc) == {"_id": 1, "a": 2}


def test_set_of_id_subfield_is_immutable_field():
    err = error({"$set": {"_id.x": 2}}, {"_id": {"x": 1}})
    assert err.code == 66
    assert err.errmsg == ("Performing an update on the path '_id.x' would modify the immutable "
                          "field '_id'")


def test_set_creating_top_level_dollar_field_is_refused():
    err = error({"$set": {"$a": 1}}, {"_id": 1})
    assert err.code == 52
    assert err.errmsg.startswith("The dollar ($) prefixed field '$a' in '$a' is not allowed")


def test_set_creating_nested_dollar_field_is_allowed():
    assert apply({"$set": {"a.$b": 1}}, {"_id": 1}) == {"_id": 1, "a": {"$b": 1}}


def test_set_top_level_dollar_field_is_allowed_on_upsert_insert():
    assert apply({"$set": {"$a": 1}}, {"_id": 1}, inserting=True) == {"_id": 1, "$a": 1}


def test_set_value_is_copied_not_shared_between_documents():
    plan = compile_update({"$set": {"a": {"b": [1]}}})
    first = plan.apply({"_id": 1})
    first["a"]["b"].append(2)
    assert plan.apply({"_id": 2}) == {"_id": 2, "a": {"b": [1]}}


def test_unset_removes_field():
    assert apply({"$unset": {"a": ""}}, {"_id": 1, "a": 1, "b": 2}) == {"_id": 1, "b": 2}


def test_unset_missing_field_is_a_no_op():
    doc = {"_id": 1}
    assert apply({"$unset": {"a.b.c": 1}}, doc) is doc


def test_unset_through_scalar_is_a_no_op():
    doc = {"_id": 1, "a": 5}
    assert apply({"$unset": {"a.b": 1}}, doc) is doc


def test_unset_of_array_element_sets_null():
    assert apply({"$unset": {"a.1": 1}}, {"_id": 1, "a": [1, 2, 3]}) == {"_id": 1, "a": [1, None, 3]}


def test_unset_of_id_is_immutable_field():
    err = error({"$unset": {"_id": 1}}, {"_id": 1})
    assert err.code == 66


def test_set_on_insert_only_applies_when_inserting():
    plan = compile_update({"$setOnInsert": {"a": 1}, "$set": {"b": 2}})
    assert plan.apply({"_id": 1}) == {"_id": 1, "b": 2}
    assert plan.apply({"_id": 1}, inserting=True) == {"_id": 1, "a": 1, "b": 2}


def test_set_on_insert_alone_is_a_no_op_on_update():
    doc = {"_id": 1}
    assert compile_update({"$setOnInsert": {"a": 1}}).apply(doc) is doc


def test_int64_values_keep_their_type():
    out = apply({"$set": {"a": Int64(5)}}, {"_id": 1})
    assert type(out["a"]) is Int64


def test_numeric_fields_are_processed_in_numeric_order():
    out = apply({"$set": {"a.10": 1, "a.2": 2}}, {"_id": 1, "a": []})
    assert out["a"] == [None, None, 2, None, None, None, None, None, None, None, 1]
    out = apply({"$set": {"b.10": 1, "b.9": 2, "b.x": 3, "b.01": 4}}, {"_id": 1, "b": {}})
    assert list(out["b"]) == ["01", "9", "10", "x"]


def test_inc_on_two_indexes_grows_array_in_numeric_order():
    out = apply({"$inc": {"a.2": 1, "a.10": 1}}, {"_id": 1, "a": []})
    assert out["a"][2] == 1 and out["a"][10] == 1
