"""Field names: `$`-prefixed and dotted names, DBRef fields, message rendering."""
from __future__ import annotations

import pytest

from ginkgodb.errors import CommandError
from ginkgodb.query.update import compile_update
from ginkgodb.query.update.render import render_element, render_value


def error(spec, doc, **kw) -> CommandError:
    with pytest.raises(CommandError) as info:
        compile_update(spec).apply(doc, **kw)
    return info.value


def test_updating_existing_top_level_dollar_field_is_refused():
    err = error({"$set": {"$a": 2}}, {"_id": 1, "$a": 1})
    assert err.code == 52


def test_updating_inside_existing_top_level_dollar_field_is_allowed():
    out = compile_update({"$set": {"$a.b": 2}}).apply({"_id": 1, "$a": {"b": 1}})
    assert out == {"_id": 1, "$a": {"b": 2}}


def test_unsetting_top_level_dollar_field_is_allowed():
    out = compile_update({"$unset": {"$a": 1}}).apply({"_id": 1, "$a": 1})
    assert out == {"_id": 1}


def test_creating_dbref_fields_out_of_order_is_invalid_dbref():
    err = error({"$set": {"$ref": "c", "$id": 1}}, {"_id": 1})
    assert (err.code, err.errmsg) == (55, "Found $id field without a $ref before it, which is "
                                          "invalid.")


def test_set_value_may_contain_dotted_and_dollar_names():
    out = compile_update({"$set": {"a": {"b.c": 1, "$d": 2}}}).apply({"_id": 1})
    assert out == {"_id": 1, "a": {"b.c": 1, "$d": 2}}


def test_id_document_with_dollar_field_is_refused_on_insert():
    err = error({"$set": {"_id": {"$x": 1}}}, {}, inserting=True)
    assert err.code == 52
    assert err.errmsg.startswith("_id fields may not contain '$'-prefixed fields:")


@pytest.mark.parametrize("value, text", [
    (1, "1"), (2.0, "2.0"), (2.5, "2.5"), (1e20, "1e+20"), (float("nan"), "nan"),
    ("s", '"s"'), (None, "null"), (True, "true"), ([], "[]"), ({}, "{}"),
    ([1, {"a": 1.0}], "[ 1, { a: 1.0 } ]"),
])
def test_values_render_like_mongod_elements(value, text):
    assert render_value(value) == text


def test_element_renders_name_and_value():
    assert render_element("a", {"b": [1]}) == "a: { b: [ 1 ] }"


def test_paths_traverse_decoded_dbrefs_as_documents():
    from bson.dbref import DBRef
    out = compile_update({"$set": {"r.$id": 2}}).apply({"_id": 1, "r": DBRef("c", 1)})
    assert out == {"_id": 1, "r": {"$ref": "c", "$id": 2}}


def test_setting_dbref_to_equal_document_is_a_no_op():
    from bson.dbref import DBRef
    doc = {"_id": 1, "r": DBRef("c", 1)}
    assert compile_update({"$set": {"r": {"$ref": "c", "$id": 1}}}).apply(doc) is doc
