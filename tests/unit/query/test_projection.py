"""find projections: inclusion/exclusion, _id, dotted paths, $slice, $elemMatch, positional,
computed fields, and mongod's validation errors."""
import pytest

from ginkgodb.errors import CommandError
from ginkgodb.query.projection import compile_projection

DOC = {"_id": 1, "a": [{"b": 1, "c": 2}, 3, {"c": 4}], "x": "X", "arr": [5, 6, 7],
       "n": {"p": 1, "q": 2}}


def proj(spec, doc=DOC, **kw):
    return compile_projection(spec).apply(doc, **kw)


def code(spec, **kw):
    with pytest.raises(CommandError) as info:
        compile_projection(spec, **kw)
    return info.value.code


def test_inclusion_keeps_id_and_named_fields_in_document_order():
    assert proj({"x": 1, "n": 1}) == {"_id": 1, "x": "X", "n": {"p": 1, "q": 2}}
    assert list(proj({"n": 1, "x": 1})) == ["_id", "x", "n"]


def test_id_can_be_excluded_from_inclusion():
    assert proj({"x": 1, "_id": 0}) == {"x": "X"}


def test_id_alone():
    assert proj({"_id": 1}) == {"_id": 1}
    assert "_id" not in proj({"_id": 0}) and "x" in proj({"_id": 0})


def test_exclusion_removes_named_fields_only():
    assert proj({"x": 0, "arr": 0}) == {"_id": 1, "a": DOC["a"], "n": {"p": 1, "q": 2}}


def test_dotted_inclusion_through_array_drops_non_documents():
    assert proj({"a.b": 1}) == {"_id": 1, "a": [{"b": 1}, {}]}


def test_dotted_exclusion_through_array_keeps_non_documents():
    assert proj({"a.c": 0, "x": 0, "arr": 0, "n": 0}) == {"_id": 1, "a": [{"b": 1}, 3, {}]}


def test_nested_spec_equals_dotted_spec():
    assert proj({"n": {"q": 1}}) == proj({"n.q": 1}) == {"_id": 1, "n": {"q": 2}}


def test_empty_projection_returns_whole_document():
    assert proj({}) == DOC


def test_input_document_is_not_modified():
    doc = {"_id": 1, "n": {"p": 1}}
    proj({"n.z": {"$literal": 5}}, doc)
    assert doc == {"_id": 1, "n": {"p": 1}}


def test_slice_forms():
    assert proj({"arr": {"$slice": 2}})["arr"] == [5, 6]
    assert proj({"arr": {"$slice": -1}})["arr"] == [7]
    assert proj({"arr": {"$slice": [1, 5]}})["arr"] == [6, 7]
    assert proj({"arr": {"$slice": [-2, 1]}})["arr"] == [6]


def test_slice_alone_keeps_other_fields_and_in_inclusion_only_named():
    assert proj({"arr": {"$slice": 1}})["x"] == "X"
    assert proj({"arr": {"$slice": 1}, "x": 1}) == {"_id": 1, "x": "X", "arr": [5]}


def test_slice_of_non_array_leaves_value():
    assert proj({"x": {"$slice": 1}})["x"] == "X"


def test_elem_match_returns_first_matching_element_only():
    assert proj({"arr": {"$elemMatch": {"$gt": 5}}}) == {"_id": 1, "arr": [6]}
    assert proj({"arr": {"$elemMatch": {"$gt": 50}}}) == {"_id": 1}
    docs = {"_id": 2, "s": [{"k": 1, "v": "a"}, {"k": 2, "v": "b"}]}
    assert proj({"s": {"$elemMatch": {"k": 2}}}, docs) == {"_id": 2, "s": [{"k": 2, "v": "b"}]}


def test_positional_uses_position():
    assert proj({"arr.$": 1}, position=2) == {"_id": 1, "arr": [7]}


def test_positional_without_position_is_51246():
    with pytest.raises(CommandError) as info:
        proj({"arr.$": 1}, position=None)
    assert info.value.code == 51246


def test_positional_out_of_bounds_is_51247():
    with pytest.raises(CommandError) as info:
        proj({"arr.$": 1}, position=9)
    assert info.value.code == 51247


def test_computed_fields_are_aggregation_expressions():
    assert proj({"full": {"$concat": ["$x", "!"]}, "_id": 0}) == {"full": "X!"}
    assert proj({"lit": "hello", "_id": 0}) == {"lit": "hello"}
    assert proj({"ref": "$n.p", "_id": 0}) == {"ref": 1}
    assert proj({"gone": "$nope", "_id": 0}) == {}


def test_computed_dotted_field_through_array_replaces_every_element():
    doc = {"_id": 1, "a": [{"x": 1}, 5]}
    assert proj({"a.b": {"$literal": 7}}, doc) == {"_id": 1, "a": [{"b": 7}, {"b": 7}]}


def test_is_inclusion_and_fields_for_the_planner():
    p = compile_projection({"x": 1, "n.p": 1})
    assert p.is_inclusion and p.fields == ["_id", "x", "n"]
    assert compile_projection({"x": 0}).fields is None
    assert not compile_projection({"x": 0}).is_inclusion


@pytest.mark.parametrize("spec,expected", [
    ({"a": 1, "b": 0}, 31254), ({"a": 0, "b": 1}, 31253), ({"a": 0, "b": {"$add": [1]}}, 31252),
    ({"a": 0, "b": "$a"}, 31310), ({"a": 1, "a.b": 1}, 31249), ({"a.b": 1, "a": 1}, 31250),
    ({"a": {}}, 51270), ({"a.$.b": 1}, 31394), ({"a.$": 1, "b.$": 1}, 31276),
    ({"$a": 1}, 16410), ({"a": {"$elemMatch": 1}}, 31274), ({"a.b": {"$elemMatch": {}}}, 31275),
    ({"a.$": 1, "b": {"$elemMatch": {"x": 1}}}, 31255),
    ({"b": {"$elemMatch": {"x": 1}}, "a.$": 1}, 31256), ({"a": {"$foo": 1}}, 31325),
    ({"_id": {"$add": [1]}, "a": 0}, 31254),
])
def test_invalid_projections(spec, expected):
    assert code(spec) == expected


def test_id_flags_do_not_fix_the_projection_kind():
    assert compile_projection({"_id": 1, "a": 0}).is_inclusion is False
    assert compile_projection({"_id": 0, "a": 1}).is_inclusion is True


def test_aggregation_mode_rejects_positional_and_treats_slice_as_expression():
    assert code({"a.$": 1}, for_aggregation=True) == 31324
    p = compile_projection({"s": {"$slice": ["$arr", 1]}}, for_aggregation=True)
    assert p.apply(DOC)["s"] == [5]
    assert code({}, for_aggregation=True) == 51272
