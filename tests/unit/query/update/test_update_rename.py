"""$rename: moves values, refuses arrays, dynamic paths, same paths and _id changes."""
from __future__ import annotations

import pytest

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


def test_rename_moves_value_to_new_field_at_the_end():
    assert apply({"$rename": {"a": "z"}}, {"_id": 1, "a": 1, "b": 2}) == {"_id": 1, "b": 2, "z": 1}


def test_rename_overwrites_existing_target_in_place():
    out = apply({"$rename": {"a": "b"}}, {"_id": 1, "b": 0, "a": 1, "c": 2})
    assert out == {"_id": 1, "b": 1, "c": 2}


def test_rename_into_and_out_of_subdocuments():
    out = apply({"$rename": {"a.b": "c.d"}}, {"_id": 1, "a": {"b": 1, "x": 0}})
    assert out == {"_id": 1, "a": {"x": 0}, "c": {"d": 1}}


def test_rename_missing_source_is_a_no_op():
    doc = {"_id": 1, "b": 1}
    assert apply({"$rename": {"a": "b.c.d"}}, doc) is doc


def test_rename_to_equal_value_still_removes_source():
    assert apply({"$rename": {"a": "b"}}, {"_id": 1, "a": 1, "b": 1}) == {"_id": 1, "b": 1}


def test_rename_same_source_and_target_is_refused():
    err = compile_error({"$rename": {"a": "a"}})
    assert (err.code, err.errmsg) == (2, 'The source and target field for $rename must differ: '
                                         'a: "a"')


def test_rename_onto_own_path_is_refused():
    err = compile_error({"$rename": {"a": "a.b"}})
    assert (err.code, err.errmsg) == (2, "The source and target field for $rename must not be "
                                         'on the same path: a: "a.b"')


def test_rename_target_must_be_a_string():
    err = compile_error({"$rename": {"a": 1}})
    assert (err.code, err.errmsg) == (2, "The 'to' field for $rename must be a string: a: 1")


@pytest.mark.parametrize("spec, message", [
    ({"a.$": "b"}, "The source field for $rename may not be dynamic: a.$"),
    ({"a": "b.$[]"}, "The destination field for $rename may not be dynamic: b.$[]"),
])
def test_rename_dynamic_paths_are_refused(spec, message):
    err = compile_error({"$rename": spec})
    assert (err.code, err.errmsg) == (2, message)


def test_rename_from_array_element_is_refused():
    err = error({"$rename": {"a.0": "b"}}, {"_id": 1, "a": [1]})
    assert (err.code, err.errmsg) == (2, "The source field cannot be an array element, 'a.0' in "
                                         "doc with _id: 1 has an array field called 'a'")


def test_rename_into_array_element_is_refused():
    err = error({"$rename": {"a": "b.0"}}, {"_id": 1, "a": 1, "b": [5]})
    assert (err.code, err.errmsg) == (2, "The destination field cannot be an array element, "
                                         "'b.0' in doc with _id: 1 has an array field called 'b'")


def test_rename_through_scalar_source_is_path_not_viable():
    err = error({"$rename": {"a.b": "c"}}, {"_id": 1, "a": 1})
    assert err.code == 28


def test_rename_of_id_is_immutable():
    err = error({"$rename": {"_id": "x"}}, {"_id": 1})
    assert (err.code, err.errmsg) == (66, "Unsetting the path '_id' using $rename would modify "
                                          "the immutable field '_id'")


def test_rename_onto_id_is_immutable():
    err = error({"$rename": {"a": "_id"}}, {"_id": 1, "a": 2})
    assert err.code == 66


def test_rename_conflicts_with_update_of_source_or_target():
    assert compile_error({"$rename": {"a": "b"}, "$set": {"a": 1}}).code == 40
    assert compile_error({"$rename": {"a": "b"}, "$set": {"b.c": 1}}).code == 40


def test_rename_whole_array_is_allowed():
    assert apply({"$rename": {"a": "b"}}, {"_id": 1, "a": [1, 2]}) == {"_id": 1, "b": [1, 2]}
