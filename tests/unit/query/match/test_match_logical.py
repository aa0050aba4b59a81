"""$and, $or, $nor, $not, implicit AND, $comment, $alwaysTrue/$alwaysFalse."""
from bson.regex import Regex
from matchkit import compile_error, matches


def test_empty_filter_matches_everything():
    assert matches({}, {"a": 1})
    assert matches({}, {})


def test_fields_are_implicitly_anded():
    assert matches({"a": 1, "b": 2}, {"a": 1, "b": 2})
    assert not matches({"a": 1, "b": 2}, {"a": 1, "b": 3})


def test_and_or_nor():
    doc = {"a": 1, "b": 2}
    assert matches({"$and": [{"a": 1}, {"b": 2}]}, doc)
    assert not matches({"$and": [{"a": 1}, {"b": 3}]}, doc)
    assert matches({"$or": [{"a": 5}, {"b": 2}]}, doc)
    assert not matches({"$or": [{"a": 5}, {"b": 5}]}, doc)
    assert matches({"$nor": [{"a": 5}, {"b": 5}]}, doc)
    assert not matches({"$nor": [{"a": 1}, {"b": 5}]}, doc)


def test_nested_logical_operators():
    spec = {"$or": [{"$and": [{"a": 1}, {"b": {"$gt": 1}}]}, {"$nor": [{"c": {"$exists": False}}]}]}
    assert matches(spec, {"a": 1, "b": 2})
    assert matches(spec, {"c": None})
    assert not matches(spec, {"a": 1, "b": 1})


def test_logical_operator_errors():
    assert compile_error({"$and": []}) == (2, "$and/$or/$nor must be a nonempty array")
    assert compile_error({"$or": {}}) == (2, "$or must be an array")
    assert compile_error({"$nor": 1}) == (2, "$nor must be an array")
    assert compile_error({"$or": [1]}) == (2, "$or/$and/$nor entries need to be full objects")


def test_not_negates_operators():
    assert matches({"a": {"$not": {"$gt": 5}}}, {"a": 3})
    assert not matches({"a": {"$not": {"$gt": 5}}}, {"a": 7})
    assert matches({"a": {"$not": {"$gt": 5}}}, {})
    assert matches({"a": {"$not": {"$gt": 5}}}, {"a": "str"})


def test_not_negates_the_whole_operator_set():
    assert matches({"a": {"$not": {"$gt": 1, "$lt": 3}}}, {"a": 5})
    assert not matches({"a": {"$not": {"$gt": 1, "$lt": 3}}}, {"a": 2})


def test_not_over_arrays_negates_any_element():
    assert not matches({"a": {"$not": {"$gt": 5}}}, {"a": [1, 9]})


def test_not_with_regex():
    assert matches({"a": {"$not": Regex("^x")}}, {"a": "yx"})
    assert not matches({"a": {"$not": Regex("^x")}}, {"a": "xy"})
    assert matches({"a": {"$not": {"$regex": "^x"}}}, {"a": 1})


def test_not_errors():
    assert compile_error({"a": {"$not": 1}}) == (2, "$not needs a regex or a document")
    assert compile_error({"a": {"$not": {}}}) == (2, "$not cannot be empty")
    assert compile_error({"a": {"$not": {"b": 1}}}) == (2, "unknown operator: b")
    assert compile_error({"$not": {"a": 1}}) == (
        2, "unknown top level operator: $not. If you are trying to negate an entire expression, "
           "use $nor.")


def test_unknown_top_level_operator():
    assert compile_error({"$foo": 1}) == (
        2, "unknown top level operator: $foo. If you have a field name that starts with a '$' "
           "symbol, consider using $getField or $setField.")


def test_comment_is_ignored():
    assert matches({"$comment": "hello", "a": 1}, {"a": 1})
    assert matches({"$comment": "hello"}, {"a": 1})
    assert matches({"$and": [{"$comment": "x"}, {"a": 1}]}, {"a": 1})


def test_always_true_and_false():
    assert matches({"$alwaysTrue": 1}, {})
    assert not matches({"$alwaysFalse": 1}, {"a": 1})
    assert matches({"$alwaysTrue": 1.0}, {})


def test_always_operators_need_integer_one():
    assert compile_error({"$alwaysTrue": 2}) == (9, "$alwaysTrue must be an integer value of 1")
    assert compile_error({"$alwaysFalse": "x"}) == (9, 'Expected a number in: $alwaysFalse: "x"')


def test_where_runs_and_text_is_refused_clearly():
    assert matches({"$where": "this.a == 1"}, {"a": 1}) and not matches({"$where": "this.a == 1"}, {"a": 2})
    assert compile_error({"$text": {"$search": "x"}})[0] == 238
    assert compile_error({"a": {"$where": "x"}}) == (2, "$where cannot be applied to a field")


def test_json_schema_must_be_an_object():
    assert compile_error({"$jsonSchema": 1}) == (14, "$jsonSchema must be an object")


def test_top_level_dbref_fields_compare_by_equality():
    assert matches({"$id": 5}, {"$id": 5})


def test_sample_rate_bounds():
    assert matches({"$sampleRate": 1}, {})
    assert not matches({"$sampleRate": 0}, {})
    assert compile_error({"$sampleRate": 2}) == (2, "numeric argument to $sampleRate must be in [0, 1]")
    assert compile_error({"$sampleRate": "x"}) == (2, "argument to $sampleRate must be a numeric type")
