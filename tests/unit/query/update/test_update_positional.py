"""Positional `$`, all-positional `$[]` and filtered `$[<id>]` with arrayFilters."""
from __future__ import annotations

import pytest

from ginkgodb.errors import CommandError
from ginkgodb.query.update import compile_update


def apply(spec, doc, **kw):
    filters = kw.pop("array_filters", None)
    return compile_update(spec, array_filters=filters).apply(doc, **kw)


def error(spec, doc, **kw) -> CommandError:
    with pytest.raises(CommandError) as info:
        apply(spec, doc, **kw)
    return info.value


def compile_error(spec, **kw) -> CommandError:
    with pytest.raises(CommandError) as info:
        compile_update(spec, **kw)
    return info.value


def test_positional_updates_the_matched_element():
    out = apply({"$set": {"a.$": 9}}, {"_id": 1, "a": [1, 2, 3]}, position=1)
    assert out["a"] == [1, 9, 3]


def test_positional_into_embedded_document():
    doc = {"_id": 1, "a": [{"b": 1}, {"b": 2}]}
    assert apply({"$inc": {"a.$.b": 10}}, doc, position=1)["a"] == [{"b": 1}, {"b": 12}]


def test_positional_without_match_is_bad_value():
    err = error({"$set": {"a.$": 9}}, {"_id": 1, "a": [1]})
    assert (err.code, err.errmsg) == (2, "The positional operator did not find the match needed "
                                         "from the query.")


def test_positional_and_same_explicit_index_conflict():
    err = error({"$set": {"a.$": 1, "a.0": 2}}, {"_id": 1, "a": [0, 0]}, position=0)
    assert (err.code, err.errmsg) == (40, "Update created a conflict at 'a.0'")


def test_positional_and_other_index_both_apply():
    out = apply({"$set": {"a.$": 1, "a.1": 2}}, {"_id": 1, "a": [0, 0]}, position=0)
    assert out["a"] == [1, 2]


def test_positional_and_explicit_index_merge_when_disjoint():
    doc = {"_id": 1, "a": [{"x": 0}]}
    out = apply({"$set": {"a.$.y": 1, "a.0.z": 2}}, doc, position=0)
    assert out["a"] == [{"x": 0, "y": 1, "z": 2}]


def test_all_positional_updates_every_element():
    out = apply({"$inc": {"a.$[]": 1}}, {"_id": 1, "a": [1, 2, 3]})
    assert out["a"] == [2, 3, 4]


def test_all_positional_nested_fields():
    doc = {"_id": 1, "a": [{"b": [1, 2]}, {"b": [3]}]}
    assert apply({"$set": {"a.$[].b.$[]": 0}}, doc)["a"] == [{"b": [0, 0]}, {"b": [0]}]


def test_all_positional_on_empty_array_is_a_no_op():
    doc = {"_id": 1, "a": []}
    assert apply({"$set": {"a.$[]": 1}}, doc) is doc


def test_all_positional_on_missing_path_is_bad_value():
    err = error({"$set": {"a.$[]": 1}}, {"_id": 1})
    assert (err.code, err.errmsg) == (2, "The path 'a' must exist in the document in order to "
                                         "apply array updates.")


def test_all_positional_on_non_array_is_bad_value():
    err = error({"$set": {"a.$[]": 1}}, {"_id": 1, "a": 5})
    assert (err.code, err.errmsg) == (2, "Cannot apply array updates to non-array element a: 5")


def test_all_positional_through_scalar_elements_is_path_not_viable():
    err = error({"$set": {"a.$[].b": 1}}, {"_id": 1, "a": [0]})
    assert (err.code, err.errmsg) == (28, "Cannot create field 'b' in element {0: 0}")


def test_all_positional_creates_fields_in_document_elements():
    out = apply({"$set": {"a.$[].b": 1}}, {"_id": 1, "a": [{}, {"b": 0}]})
    assert out["a"] == [{"b": 1}, {"b": 1}]


def test_all_positional_paths_with_disjoint_leaves_share_the_array():
    out = apply({"$set": {"a.$[].b": 1}, "$inc": {"a.$[].c": 1}}, {"_id": 1, "a": [{}]})
    assert out["a"] == [{"b": 1, "c": 1}]


def test_all_positional_and_explicit_index_under_same_array_conflict_at_parse():
    err = compile_error({"$set": {"a.$[].b": 1, "a.0.c": 1}})
    assert (err.code, err.errmsg) == (40, "Updating the path 'a.0.c' would create a conflict "
                                          "at 'a'")


def test_unused_array_filter_is_failed_to_parse():
    err = compile_error({"$set": {"a": 1}}, array_filters=[{"x": 1}])
    assert err.code == 9
    assert err.errmsg == "The array filter for identifier 'x' was not used in the update { $set: { a: 1 } }"


@pytest.mark.parametrize("filters, code, message", [
    ([{"X": 1}], 2, "Error parsing array filter :: caused by :: The top-level field name must "
                    "be an alphanumeric string beginning with a lowercase letter, found 'X'"),
    ([{"1x": 1}], 2, "Error parsing array filter :: caused by :: The top-level field name must "
                     "be an alphanumeric string beginning with a lowercase letter, found '1x'"),
    ([{"x": 1, "y": 1}], 9, "Error parsing array filter :: caused by :: Expected a single "
                            "top-level field name, found 'x' and 'y'"),
    ([{"x": 1}, {"x": 2}], 9, "Found multiple array filters with the same top-level field "
                              "name x"),
    ([{}], 9, "Cannot use an expression without a top-level field name in arrayFilters"),
])
def test_array_filter_identifier_errors(filters, code, message):
    err = compile_error({"$set": {"a.$[x]": 1}}, array_filters=filters)
    assert (err.code, err.errmsg) == (code, message)


def test_array_filter_selects_scalar_elements():
    out = apply({"$set": {"a.$[x]": 0}}, {"_id": 1, "a": [1, 5, 10]},
                array_filters=[{"x": {"$gt": 4}}])
    assert out["a"] == [1, 0, 0]


def test_array_filter_on_embedded_field():
    doc = {"_id": 1, "a": [{"k": 1, "v": 0}, {"k": 2, "v": 0}]}
    out = apply({"$inc": {"a.$[e].v": 5}}, doc, array_filters=[{"e.k": 2}])
    assert out["a"] == [{"k": 1, "v": 0}, {"k": 2, "v": 5}]


def test_array_filters_combine_with_and_or():
    doc = {"_id": 1, "a": [1, 2, 3, 4]}
    out = apply({"$set": {"a.$[x]": 0}}, doc,
                array_filters=[{"$or": [{"x": 1}, {"x": {"$gte": 4}}]}])
    assert out["a"] == [0, 2, 3, 0]


def test_two_filters_matching_same_element_with_same_leaf_conflict():
    err = error({"$set": {"a.$[x]": 1, "a.$[y]": 2}}, {"_id": 1, "a": [5]},
                array_filters=[{"x": 5}, {"y": 5}])
    assert (err.code, err.errmsg) == (40, "Update created a conflict at 'a.0'")


def test_nested_array_filters():
    doc = {"_id": 1, "a": [{"b": [1, 5]}, {"b": [7]}]}
    out = apply({"$set": {"a.$[i].b.$[j]": 0}}, doc,
                array_filters=[{"i.b": {"$size": 2}}, {"j": {"$gte": 5}}])
    assert out["a"] == [{"b": [1, 0]}, {"b": [7]}]


def test_array_filter_with_no_match_is_a_no_op():
    doc = {"_id": 1, "a": [1, 2]}
    assert apply({"$set": {"a.$[x]": 0}}, doc, array_filters=[{"x": 9}]) is doc


def test_array_filter_may_not_use_where():
    err = compile_error({"$set": {"a.$[x]": 1}},
                        array_filters=[{"x": 1, "$where": "true"}])
    assert (err.code, err.errmsg) == (224, "Error parsing array filter :: caused by :: $where is "
                                           "not allowed in this context")


def test_nested_merge_conflict_names_the_identifier_path():
    doc = {"_id": 0, "a": [{"x": 0, "b": [{"y": 0}]}]}
    err = error({"$set": {"a.$[i].b.$[k].c": 1, "a.$[j].b.$[k].c": 2}}, doc,
                array_filters=[{"i.x": 0}, {"j.x": 0}, {"k.y": 0}])
    assert (err.code, err.errmsg) == (40, "Update created a conflict at 'a.0.b.$[k].c'")
