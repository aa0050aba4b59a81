"""Compiling update specifications: kinds, unknown modifiers, conflicts, path syntax."""
from __future__ import annotations

import pytest

from ginkgodb.errors import CommandError
from ginkgodb.query.update import compile_update


def compile_error(spec, **kw) -> CommandError:
    with pytest.raises(CommandError) as info:
        compile_update(spec, **kw)
    return info.value


def test_unknown_modifier_is_failed_to_parse():
    err = compile_error({"$foo": {"a": 1}})
    assert err.code == 9
    assert err.errmsg == ("Unknown modifier: $foo. Expected a valid update modifier or "
                          "pipeline-style update specified as an array")


def test_operator_followed_by_plain_field_is_unknown_modifier():
    err = compile_error({"$set": {"a": 1}, "b": 2})
    assert err.code == 9
    assert err.errmsg.startswith("Unknown modifier: b.")


def test_plain_field_followed_by_operator_is_a_replacement_refused_at_apply():
    plan = compile_update({"b": 2, "$set": {"a": 1}})
    assert plan.is_replacement
    with pytest.raises(CommandError) as info:
        plan.apply({"_id": 1})
    assert info.value.code == 52
    assert "'$set' in '$set'" in info.value.errmsg


def test_modifier_operand_must_be_a_document():
    err = compile_error({"$set": 1})
    assert err.code == 9
    assert err.errmsg == ("Modifiers operate on fields but we found type int instead. For "
                          "example: {$mod: {<field>: ...}} not {$set: 1}")


def test_empty_modifier_operand_is_a_no_op():
    doc = {"_id": 1}
    assert compile_update({"$set": {}}).apply(doc) is doc


@pytest.mark.parametrize("spec, at", [
    ({"$set": {"a": 1}, "$inc": {"a": 1}}, "a"),
    ({"$set": {"a": 1, "a.b": 1}}, "a"),
    ({"$set": {"a.b": 1}, "$unset": {"a": 1}}, "a"),
])
def test_conflicting_paths_are_error_40(spec, at):
    err = compile_error(spec)
    assert err.code == 40
    assert err.errmsg.endswith(f"would create a conflict at '{at}'")


def test_conflict_message_names_path_and_prefix():
    err = compile_error({"$set": {"a.b.c": 1}, "$inc": {"a.b": 1}})
    assert err.errmsg == "Updating the path 'a.b' would create a conflict at 'a.b'"
    err = compile_error({"$set": {"a.b": 1}, "$inc": {"a.b.c": 1}})
    assert err.errmsg == "Updating the path 'a.b.c' would create a conflict at 'a.b'"


def test_sibling_paths_do_not_conflict():
    out = compile_update({"$set": {"a.b": 1}, "$inc": {"a.c": 1}}).apply({"_id": 1})
    assert out == {"_id": 1, "a": {"b": 1, "c": 1}}


@pytest.mark.parametrize("path, message", [
    ("", "An empty update path is not valid."),
    ("a..b", "The update path 'a..b' contains an empty field name, which is not allowed."),
    ("a.", "The update path 'a.' contains an empty field name, which is not allowed."),
])
def test_empty_path_parts_are_error_56(path, message):
    err = compile_error({"$set": {path: 1}})
    assert (err.code, err.errmsg) == (56, message)


def test_two_positional_operators_are_refused():
    err = compile_error({"$set": {"a.$.b.$": 1}})
    assert (err.code, err.errmsg) == (2, "Too many positional (i.e. '$') elements found in path "
                                         "'a.$.b.$'")


def test_positional_operator_first_is_refused():
    err = compile_error({"$set": {"$.a": 1}})
    assert (err.code, err.errmsg) == (2, "Cannot have positional (i.e. '$') element in the "
                                         "first position in path '$.a'")


def test_array_filter_identifier_first_is_refused():
    err = compile_error({"$set": {"$[].a": 1}})
    assert err.code == 2
    assert err.errmsg == ("Cannot have array filter identifier (i.e. '$[<id>]') element in the "
                          "first position in path '$[].a'")


def test_undefined_array_filter_identifier_is_refused():
    err = compile_error({"$set": {"a.$[x]": 1}})
    assert (err.code, err.errmsg) == (2, "No array filter found for identifier 'x' in path "
                                         "'a.$[x]'")


def test_pipeline_with_array_filters_is_refused():
    err = compile_error([{"$set": {"a": 1}}], array_filters=[{"x": 1}])
    assert (err.code, err.errmsg) == (9, "arrayFilters may not be specified for pipeline-style "
                                         "updates")


def test_pipeline_rejects_stages_other_than_the_update_stages():
    err = compile_error([{"$match": {"a": 1}}])
    assert (err.code, err.errmsg) == (72, "$match is not allowed to be used within an update")


def test_needs_position_reflects_positional_operator():
    assert compile_update({"$set": {"a.$": 1}}).needs_position
    assert not compile_update({"$set": {"a.0": 1}}).needs_position
