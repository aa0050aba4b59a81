"""Field paths, variables, literals, object/array expressions and parse errors."""
from bson.int64 import Int64
from exprkit import code_of, ev, message_of

from ginkgodb.query.expr import MISSING, compile_expr


def test_field_path_reads_top_level_and_nested_fields():
    assert ev("$a", {"a": 1}) == 1
    assert ev("$a.b.c", {"a": {"b": {"c": 5}}}) == 5


def test_missing_field_is_missing_not_null():
    assert ev("$nope", {}) is MISSING
    assert ev("$a.b", {"a": 1}) is MISSING


def test_path_through_array_of_documents_collects_values():
    doc = {"a": [{"b": 1}, {"c": 2}, {"b": [3]}, 7, [{"b": 9}]]}
    assert ev("$a.b", doc) == [1, [3]]


def test_root_and_current_variables():
    doc = {"a": 1}
    assert ev("$$ROOT", doc) is doc
    assert ev("$$CURRENT.a", doc) == 1


def test_remove_is_missing():
    assert ev("$$REMOVE") is MISSING


def test_now_comes_from_variables_when_given():
    import datetime
    now = datetime.datetime(2020, 1, 1)
    assert ev("$$NOW", {}, {"NOW": now}) == now
    assert isinstance(ev("$$NOW"), datetime.datetime)


def test_user_variables_come_from_let_values():
    assert ev({"$add": ["$$x", 1]}, {}, {"x": 2}) == 3
    assert ev("$$x.y", {}, {"x": {"y": 4}}) == 4


def test_unknown_variable_is_17276():
    assert code_of("$$nope") == 17276


def test_closed_scope_rejects_unbound_variables_at_compile_time():
    import pytest

    from ginkgodb.errors import CommandError
    with pytest.raises(CommandError) as info:
        compile_expr({"$add": ["$$y", 1]}, allow_vars=False)
    assert info.value.code == 17276
    assert compile_expr("$$y", known_vars=["y"])({}, {"y": 3}) == 3


def test_object_expression_drops_missing_fields():
    assert ev({"x": "$a", "y": "$nope", "z": {"$literal": 1}}, {"a": 5}) == {"x": 5, "z": 1}


def test_array_expression_turns_missing_into_null():
    assert ev(["$a", "$nope"], {"a": 1}) == [1, None]


def test_literal_keeps_dollar_strings():
    assert ev({"$literal": "$a"}) == "$a"
    assert ev({"$literal": {"$add": [1]}}) == {"$add": [1]}


def test_unknown_operator_is_168():
    assert code_of({"$foo": 1}) == 168
    assert message_of({"$foo": 1}) == "Unrecognized expression '$foo'"


def test_operator_object_with_two_fields_is_15983():
    assert code_of({"$add": [1], "$sub": 2}) == 15983


def test_dollar_field_in_object_literal_is_16410():
    assert code_of({"a": 1, "$b": 2}) == 16410


def test_fixed_arity_message():
    assert message_of({"$eq": [1]}) == "Expression $eq takes exactly 2 arguments. 1 were passed in."
    assert code_of({"$eq": [1]}) == 16020


def test_ranged_arity_message():
    assert code_of({"$slice": [[1]]}) == 28667


def test_bad_field_paths():
    assert code_of("$") == 16872
    assert code_of("$a..b") == 15998
    assert code_of("$a.") == 40353
    assert code_of("$a.$b") == 16410


def test_let_binds_variables_and_can_rebind_current():
    assert ev({"$let": {"vars": {"x": 2, "y": "$a"}, "in": {"$multiply": ["$$x", "$$y"]}}},
              {"a": 3}) == 6
    spec = {"$let": {"vars": {"CURRENT": "$sub"}, "in": {"k": "$k", "root": "$$ROOT.k"}}}
    assert ev(spec, {"k": 1, "sub": {"k": 2}}) == {"k": 2, "root": 1}


def test_let_errors():
    assert code_of({"$let": {"in": 1}}) == 16876
    assert code_of({"$let": {"vars": {}}}) == 16877
    assert code_of({"$let": {"vars": {"X": 1}, "in": 1}}) == 9
    assert code_of({"$let": {"vars": {}, "in": 1, "z": 1}}) == 16875


def test_constant_subtrees_fold_at_compile_time():
    import pytest

    from ginkgodb.errors import CommandError
    with pytest.raises(CommandError) as info:
        compile_expr({"$divide": [1, 0]})
    assert info.value.code == 2


def test_int64_values_are_preserved():
    assert type(ev("$a", {"a": Int64(3)})) is Int64
