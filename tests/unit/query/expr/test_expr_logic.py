"""Comparison, boolean and conditional operators."""
from bson.int64 import Int64
from exprkit import code_of, ev


def test_comparisons_use_bson_order_across_types():
    assert ev({"$lt": [1, "a"]}) is True
    assert ev({"$gt": [{"a": 1}, "z"]}) is True
    assert ev({"$eq": [1, 1.0]}) is True
    assert ev({"$eq": [Int64(2), 2.0]}) is True
    assert ev({"$cmp": ["b", "a"]}) == 1
    assert ev({"$cmp": [None, 0]}) == -1


def test_missing_is_not_equal_to_null_and_sorts_below_it():
    assert ev({"$eq": ["$x", None]}) is False
    assert ev({"$lt": ["$x", None]}) is True
    assert ev({"$eq": ["$x", "$y"]}) is True


def test_and_or_not_coerce_to_bool():
    assert ev({"$and": [1, "a", [0]]}) is True
    assert ev({"$and": [1, 0]}) is False
    assert ev({"$and": []}) is True
    assert ev({"$or": [None, "$x", 0.0]}) is False
    assert ev({"$or": []}) is False
    assert ev({"$not": [0]}) is True
    assert ev({"$not": "$x"}) is True


def test_cond_array_and_object_forms():
    assert ev({"$cond": [True, 1, 2]}) == 1
    assert ev({"$cond": {"if": "$x", "then": 1, "else": 2}}) == 2


def test_cond_errors():
    assert code_of({"$cond": {"then": 1, "else": 2}}) == 17080
    assert code_of({"$cond": {"if": 1, "else": 2}}) == 17081
    assert code_of({"$cond": {"if": 1, "then": 2}}) == 17082
    assert code_of({"$cond": {"if": 1, "then": 1, "else": 2, "x": 1}}) == 17083
    assert code_of({"$cond": [1, 2]}) == 16020


def test_if_null_returns_first_non_nullish():
    assert ev({"$ifNull": ["$x", None, 3]}) == 3
    assert ev({"$ifNull": ["$a", 3]}, {"a": 0}) == 0
    assert code_of({"$ifNull": [1]}) == 1257300


def test_switch():
    spec = {"$switch": {"branches": [{"case": {"$gt": ["$a", 5]}, "then": "big"},
                                     {"case": {"$gt": ["$a", 1]}, "then": "mid"}],
                        "default": "small"}}
    assert ev(spec, {"a": 9}) == "big"
    assert ev(spec, {"a": 2}) == "mid"
    assert ev(spec, {"a": 0}) == "small"


def test_switch_errors():
    assert code_of({"$switch": 1}) == 40060
    assert code_of({"$switch": {"branches": 1}}) == 40061
    assert code_of({"$switch": {"branches": [1]}}) == 40062
    assert code_of({"$switch": {"branches": [{"then": 1}]}}) == 40064
    assert code_of({"$switch": {"branches": [{"case": 1}]}}) == 40065
    assert code_of({"$switch": {"branches": []}}) == 40068
    no_match = {"$switch": {"branches": [{"case": "$x", "then": 1}]}}
    assert code_of(no_match) == 40069
