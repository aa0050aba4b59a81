"""Object operators, accumulators over arrays, and miscellaneous operators."""
import pytest
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from exprkit import code_of, ev

from ginkgodb.query.expr import MISSING


def test_merge_objects_later_wins_and_nulls_skip():
    assert ev({"$mergeObjects": [{"a": 1, "b": 1}, None, {"b": 2}]}) == {"a": 1, "b": 2}
    assert ev({"$mergeObjects": "$arr"}, {"arr": [{"a": 1}, {"b": 2}]}) == {"a": 1, "b": 2}
    assert code_of({"$mergeObjects": [{"a": 1}, 5]}) == 40400


def test_get_set_unset_field_handle_odd_names():
    doc = {"a.b": 1, "$x": 2}
    assert ev({"$getField": "a.b"}, doc) == 1
    assert ev({"$getField": {"field": {"$literal": "$x"}, "input": "$$ROOT"}}, doc) == 2
    assert ev({"$getField": "nope"}, doc) is MISSING
    assert ev({"$setField": {"field": "k", "input": {"a": 1}, "value": 2}}) == {"a": 1, "k": 2}
    assert ev({"$unsetField": {"field": "a", "input": {"a": 1, "b": 2}}}) == {"b": 2}
    assert code_of({"$setField": {"field": 1, "input": {}, "value": 1}}) == 4161107


def test_accumulators_over_arrays_and_argument_lists():
    doc = {"a": [1, 2, "x", None, 3.5]}
    assert ev({"$sum": "$a"}, doc) == 6.5
    assert ev({"$sum": [1, 2, "$nope"]}) == 3
    assert ev({"$avg": "$a"}, doc) == 6.5 / 3
    assert ev({"$min": "$a"}, doc) == 1
    assert ev({"$max": "$a"}, doc) == "x"
    assert ev({"$avg": []}) is None and ev({"$max": [None]}) is None
    assert ev({"$sum": [Int64(1), Decimal128("1.5")]}) == Decimal128("2.5")
    assert ev({"$stdDevPop": [[1, 3]]}) == 1.0
    assert ev({"$stdDevSamp": [[1]]}) is None


def test_n_operators_on_arrays():
    assert ev({"$firstN": {"n": 2, "input": [1, 2, 3]}}) == [1, 2]
    assert ev({"$lastN": {"n": 2, "input": [1, 2, 3]}}) == [2, 3]
    assert ev({"$maxN": {"n": 2, "input": [3, None, 1, 5]}}) == [5, 3]
    assert ev({"$minN": {"n": 2, "input": [3, None, 1, 5]}}) == [1, 3]
    assert code_of({"$firstN": {"n": 0, "input": [1]}}) == 5787908


def test_percentile_and_median():
    assert ev({"$median": {"input": [1, 2, 3, 4], "method": "approximate"}}) == 2.0
    assert ev({"$percentile": {"input": [1, 2, 3, 4], "p": [0.5, 1.0],
                               "method": "approximate"}}) == [2.0, 4.0]


@pytest.mark.parametrize("spec,expected", [
    ({"$bitAnd": [12, 10]}, 8), ({"$bitOr": [12, 10]}, 14), ({"$bitXor": [12, 10]}, 6),
    ({"$bitNot": 0}, -1), ({"$binarySize": "héllo"}, 6), ({"$bsonSize": {"$literal": {}}}, 5),
])
def test_bitwise_and_sizes(spec, expected):
    assert ev(spec) == expected


def test_trigonometry_domains():
    assert ev({"$cos": 0}) == 1.0
    assert ev({"$radiansToDegrees": 3.141592653589793}) == 180.0
    assert code_of({"$acos": 2}) == 50989


def test_rand_is_fresh_per_evaluation():
    values = {ev({"$rand": {}}) for _ in range(5)}
    assert len(values) > 1 and all(0 <= v < 1 for v in values)


def test_meta_without_metadata_is_missing_or_error():
    assert ev({"$meta": "searchScore"}) is MISSING
    assert code_of({"$meta": "textScore"}) == 40218
    assert code_of({"$meta": "nope"}) == 17308
