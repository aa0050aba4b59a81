"""Replacement updates: _id kept, immutable, storage validation."""
from __future__ import annotations

import pytest
from bson.regex import Regex

from ginkgodb.errors import CommandError
from ginkgodb.query.update import compile_update, validate_replacement


def test_document_without_dollar_keys_is_a_replacement():
    plan = compile_update({"a": 1})
    assert plan.is_replacement
    assert plan.apply({"_id": 1, "b": 2}) == {"_id": 1, "a": 1}


def test_empty_document_is_a_replacement_keeping_id():
    plan = compile_update({})
    assert plan.is_replacement
    assert plan.apply({"_id": 1, "b": 2}) == {"_id": 1}


def test_replacement_with_same_id_is_allowed():
    assert compile_update({"_id": 1, "a": 2}).apply({"_id": 1}) == {"_id": 1, "a": 2}


def test_replacement_with_numerically_equal_id_is_allowed():
    assert compile_update({"_id": 1.0}).apply({"_id": 1}) == {"_id": 1.0}


def test_replacement_changing_id_is_immutable_field():
    with pytest.raises(CommandError) as info:
        compile_update({"_id": 2, "a": 1}).apply({"_id": 1})
    assert info.value.code == 66
    assert info.value.errmsg == ("After applying the update, the (immutable) field '_id' was "
                                 "found to have been altered to _id: 2")


def test_identical_replacement_is_a_no_op():
    doc = {"_id": 1, "a": [1, {"b": 2}]}
    plan = compile_update({"a": [1, {"b": 2}]})
    out = plan.apply(doc)
    assert out is doc and not plan.changes(doc, out)


def test_replacement_with_top_level_dollar_field_is_refused():
    with pytest.raises(CommandError) as info:
        compile_update({"a": 1, "$b": 2}).apply({"_id": 1})
    assert info.value.code == 52
    assert info.value.errmsg == (
        "The dollar ($) prefixed field '$b' in '$b' is not allowed in the context of an update's "
        "replacement document. Consider using an aggregation pipeline with $replaceWith.")


def test_replacement_may_hold_nested_dollar_and_dotted_fields():
    out = compile_update({"a": {"$b": 1}, "c.d": 2}).apply({"_id": 1})
    assert out == {"_id": 1, "a": {"$b": 1}, "c.d": 2}


def test_replacement_may_hold_a_dbref_shaped_document():
    out = compile_update({"a": {"$ref": "c", "$id": 1}}).apply({"_id": 1})
    assert out["a"] == {"$ref": "c", "$id": 1}


@pytest.mark.parametrize("bad, type_name", [([1], "array"), (Regex("x"), "regex")])
def test_replacement_id_of_unstorable_type_is_invalid_id_field(bad, type_name):
    with pytest.raises(CommandError) as info:
        compile_update({"_id": bad}).apply({"a": 1}, inserting=True)
    assert info.value.code == 53
    assert info.value.errmsg == f"The '_id' value cannot be of type {type_name}"


def test_validate_replacement_refuses_dollar_in_id_document():
    with pytest.raises(CommandError) as info:
        validate_replacement({"_id": {"$x": 1}})
    assert info.value.code == 52


def test_replacement_on_insert_moves_id_first():
    out = compile_update({"a": 1, "_id": 5}).apply({}, inserting=True)
    assert list(out) == ["_id", "a"]


def test_replacement_fills_top_level_zero_timestamps():
    from bson.timestamp import Timestamp
    out = compile_update({"t": Timestamp(0, 0), "n": {"t": Timestamp(0, 0)}}).apply({"_id": 1})
    assert out["t"].time > 0
    assert out["n"]["t"] == Timestamp(0, 0)
