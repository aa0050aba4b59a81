"""Pipeline-style updates (delegated to query.pipeline.run_pipeline)."""
from __future__ import annotations

import pytest

from ginkgodb.errors import CommandError
from ginkgodb.query.update import compile_update


def test_pipeline_set_stage_computes_from_the_document():
    plan = compile_update([{"$set": {"total": {"$add": ["$a", "$b"]}}}])
    assert plan.apply({"_id": 1, "a": 1, "b": 2}) == {"_id": 1, "a": 1, "b": 2, "total": 3}


def test_pipeline_unset_of_id_keeps_the_stored_id():
    plan = compile_update([{"$unset": ["_id", "a"]}])
    assert plan.apply({"_id": 1, "a": 1, "b": 2}) == {"_id": 1, "b": 2}


def test_pipeline_producing_same_document_is_a_no_op():
    doc = {"_id": 1, "a": 1}
    plan = compile_update([{"$set": {"a": 1}}])
    assert plan.apply(doc) is doc


def test_pipeline_may_create_top_level_dollar_fields():
    plan = compile_update([{"$replaceWith": {"$setField": {"field": {"$literal": "$a"},
                                                           "value": 1, "input": "$$ROOT"}}}])
    assert plan.apply({"_id": 1}) == {"_id": 1, "$a": 1}


def test_pipeline_changing_id_is_immutable_field():
    with pytest.raises(CommandError) as info:
        compile_update([{"$set": {"_id": 2}}]).apply({"_id": 1})
    assert info.value.code == 66


def test_pipeline_sees_let_variables():
    plan = compile_update([{"$set": {"a": "$$x"}}], variables={"x": 5})
    assert plan.apply({"_id": 1}) == {"_id": 1, "a": 5}


def test_pipeline_expression_errors_surface_at_compile_time():
    with pytest.raises(CommandError):
        compile_update([{"$set": {"a": {"$noSuchOperator": 1}}}])
