"""Upsert: seeding from the query's equalities, and applying the update as an insert."""
from __future__ import annotations

import datetime

import pytest
from bson.regex import Regex
from bson.timestamp import Timestamp

from ginkgodb.errors import CommandError
from ginkgodb.query.update import compile_update, upsert_seed


def seed_error(spec, **kw) -> CommandError:
    with pytest.raises(CommandError) as info:
        upsert_seed(spec, **kw)
    return info.value


def test_seed_takes_equalities_through_and_and_dotted_paths():
    seed = upsert_seed({"a": 1, "b.c": 2, "$and": [{"d": 3}]})
    assert seed == {"a": 1, "b": {"c": 2}, "d": 3}


def test_seed_drops_non_equality_operators_and_keeps_eq():
    assert upsert_seed({"a": {"$gt": 1}, "b": {"$eq": 2}, "c": {"$ne": 1}}) == {"b": 2}


def test_seed_puts_id_first_and_other_fields_in_path_order():
    seed = upsert_seed({"z": 1, "b": 2, "_id": 3, "a": 4})
    assert list(seed) == ["_id", "a", "b", "z"]


def test_seed_keeps_embedded_documents_and_arrays_whole():
    assert upsert_seed({"a": {"x": 1}, "b": [1, 2]}) == {"a": {"x": 1}, "b": [1, 2]}


def test_seed_uses_single_element_in_and_all():
    assert upsert_seed({"a": {"$in": [5]}, "b": {"$in": [1, 2]}, "c": {"$all": [7]}}) == {"a": 5, "c": 7}


def test_seed_uses_single_clause_or_but_not_wider_or():
    assert upsert_seed({"$or": [{"a": 1}]}) == {"a": 1}
    assert upsert_seed({"$or": [{"a": 1}, {"b": 2}]}) == {}


def test_seed_ignores_regex_but_keeps_eq_regex():
    seed = upsert_seed({"a": Regex("x"), "b": {"$eq": Regex("y")}})
    assert list(seed) == ["b"]


def test_seed_keeps_null_equality():
    assert upsert_seed({"a": None}) == {"a": None}


def test_seed_merges_sibling_paths_into_one_document():
    assert upsert_seed({"a.b": 1, "a.c": 2}) == {"a": {"b": 1, "c": 2}}


def test_seed_same_path_twice_is_not_single_value_field():
    err = seed_error({"a": 1, "$and": [{"a": 2}]})
    assert (err.code, err.errmsg) == (54, "cannot infer query fields to set, path 'a' is "
                                          "matched twice")


def test_seed_path_and_its_prefix_is_not_single_value_field():
    err = seed_error({"a.b": 1, "a": {"b": 1}})
    assert (err.code, err.errmsg) == (54, "cannot infer query fields to set, both paths 'a.b' "
                                          "and 'a' are matched")


def test_seed_all_with_two_values_is_matched_twice():
    assert seed_error({"a": {"$all": [1, 2]}}).code == 54


def test_seed_refuses_expr():
    assert seed_error({"$expr": {"$eq": ["$a", 1]}}).code == 224


def test_seed_for_replacement_keeps_only_id():
    assert upsert_seed({"_id": 1, "a": 2}, only_id=True) == {"_id": 1}


def test_seed_for_replacement_refuses_id_subpath():
    err = seed_error({"_id.x": 1}, only_id=True)
    assert (err.code, err.errmsg) == (111, "field at '_id' must be exactly specified, field at "
                                           "sub-path '_id.x'found")


def test_plan_seed_depends_on_update_kind():
    assert compile_update({"a": 1}).upsert_seed({"_id": 1, "b": 2}) == {"_id": 1}
    assert compile_update({"$set": {"a": 1}}).upsert_seed({"_id": 1, "b": 2}) == {"_id": 1, "b": 2}


def test_upsert_insert_applies_update_over_seed():
    plan = compile_update({"$set": {"c": 1}, "$inc": {"n": 2}, "$setOnInsert": {"d": 0}})
    out = plan.apply(plan.upsert_seed({"_id": 5, "a": 1}), inserting=True)
    assert out == {"_id": 5, "a": 1, "c": 1, "d": 0, "n": 2}


def test_upsert_insert_moves_created_id_first():
    out = compile_update({"$set": {"_id": 9, "a": 1}}).apply({"b": 1}, inserting=True)
    assert list(out) == ["_id", "b", "a"]


def test_upsert_insert_cannot_change_seeded_id():
    plan = compile_update({"$set": {"_id": 2}})
    with pytest.raises(CommandError) as info:
        plan.apply(plan.upsert_seed({"_id": 1}), inserting=True)
    assert info.value.code == 66


def test_upsert_insert_replacement_with_other_id_is_immutable():
    plan = compile_update({"_id": 2, "a": 1})
    with pytest.raises(CommandError) as info:
        plan.apply(plan.upsert_seed({"_id": 1}), inserting=True)
    assert info.value.code == 66


def test_upsert_insert_refuses_array_id_from_query():
    plan = compile_update({"$set": {"a": 1}})
    with pytest.raises(CommandError) as info:
        plan.apply(plan.upsert_seed({"_id": [1, 2]}), inserting=True)
    assert info.value.code == 53


def test_upsert_with_positional_operator_has_no_match():
    plan = compile_update({"$set": {"a.$": 1}})
    with pytest.raises(CommandError) as info:
        plan.apply({"a": [1]}, inserting=True)
    assert info.value.code == 2


def test_current_date_sets_date_or_timestamp():
    out = compile_update({"$currentDate": {"d": True, "t": {"$type": "timestamp"},
                                           "e": {"$type": "date"}}}).apply({"_id": 1})
    assert isinstance(out["d"], datetime.datetime) and out["d"] == out["e"]
    assert out["d"].microsecond % 1000 == 0
    assert isinstance(out["t"], Timestamp)


def test_current_date_is_always_a_modification():
    doc = {"_id": 1, "d": datetime.datetime(2000, 1, 1)}
    assert compile_update({"$currentDate": {"d": True}}).apply(doc) is not doc


@pytest.mark.parametrize("value, message", [
    (1, "int is not valid type for $currentDate. Please use a boolean ('true') or a $type "
        "expression ({$type: 'timestamp/date'})."),
    ({"$type": "x"}, "The '$type' string field is required to be 'date' or 'timestamp': "
                     "{$currentDate: {field : {$type: 'date'}}}"),
    ({"x": 1}, "Unrecognized $currentDate option: x"),
])
def test_current_date_argument_errors(value, message):
    with pytest.raises(CommandError) as info:
        compile_update({"$currentDate": {"a": value}})
    assert (info.value.code, info.value.errmsg) == (2, message)
