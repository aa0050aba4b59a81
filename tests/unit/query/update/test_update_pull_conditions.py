"""$pull with query conditions (uses the query matcher)."""
from __future__ import annotations

import pytest
from bson.regex import Regex

from ginkgodb.errors import CommandError
from ginkgodb.query.update import compile_update


def pull(condition, array):
    return compile_update({"$pull": {"a": condition}}).apply({"_id": 1, "a": array})["a"]


def test_pull_operator_condition_applies_to_each_element():
    assert pull({"$gte": 3}, [1, 2, 3, 4, "x"]) == [1, 2, "x"]


def test_pull_in_condition():
    assert pull({"$in": [1, "x"]}, [1, 2, "x", "y"]) == [2, "y"]


def test_pull_regex_condition():
    assert pull(Regex("^a"), ["apple", "banana", "avocado", 1]) == ["banana", 1]


def test_pull_document_condition_matches_embedded_documents_as_queries():
    docs = [{"k": 1, "v": 1}, {"k": 2, "v": 1}, {"k": 1}, 5]
    assert pull({"k": 1}, docs) == [{"k": 2, "v": 1}, 5]


def test_pull_document_condition_with_operators_inside():
    docs = [{"score": 8}, {"score": 3}, {"other": 1}]
    assert pull({"score": {"$lt": 5}}, docs) == [{"score": 8}, {"other": 1}]


def test_pull_document_condition_with_logical_operator():
    docs = [{"k": 1}, {"k": 2}, {"k": 3}]
    assert pull({"$or": [{"k": 1}, {"k": 3}]}, docs) == [{"k": 2}]


def test_pull_empty_document_condition_removes_all_documents():
    assert pull({}, [{"a": 1}, 2, {}]) == [2]


def test_pull_elem_match_on_nested_arrays():
    assert pull({"$elemMatch": {"$gt": 5}}, [[1, 2], [6], 7]) == [[1, 2], 7]


def test_pull_invalid_condition_is_reported_at_compile_time():
    with pytest.raises(CommandError):
        compile_update({"$pull": {"a": {"$gt": 1, "$foo": 2}}})


def test_pull_condition_may_not_use_expr():
    with pytest.raises(CommandError) as info:
        compile_update({"$pull": {"a": {"$expr": {"$gt": ["$b", 1]}}}})
    assert (info.value.code, info.value.errmsg) == (224, "$expr is not allowed in this context")
