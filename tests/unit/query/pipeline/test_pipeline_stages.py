"""Row-at-a-time stages and pipeline validation."""
import pytest
from bson.int64 import Int64
from pipekit import code_of, run

DOCS = [{"_id": 1, "a": 1, "b": {"c": 1}}, {"_id": 2, "a": 2}, {"_id": 3, "a": 3, "s": "x"}]


def test_stage_must_have_exactly_one_field():
    assert code_of([{"$match": {}, "$limit": 1}]) == 40323
    assert code_of([{}]) == 40323


def test_unknown_stage_is_40324():
    assert code_of([{"$foo": 1}]) == 40324


def test_stage_spec_must_be_a_document():
    assert code_of([1]) == 14


def test_match_filters_and_supports_expr_with_let():
    assert [d["_id"] for d in run([{"$match": {"a": {"$gte": 2}}}], DOCS)] == [2, 3]
    out = run([{"$match": {"$expr": {"$gt": ["$a", "$$lim"]}}}], DOCS, variables={"lim": 2})
    assert [d["_id"] for d in out] == [3]
    assert code_of([{"$match": 1}]) == 15959
    assert code_of([{"$match": {"$where": "1"}}]) == 2


def test_project_inclusion_exclusion_and_expressions():
    assert run([{"$project": {"a": 1}}], DOCS[:1]) == [{"_id": 1, "a": 1}]
    assert run([{"$project": {"b": 0, "_id": 0}}], DOCS[:1]) == [{"a": 1}]
    assert run([{"$project": {"x": {"$add": ["$a", 1]}, "_id": 0}}], DOCS[:1]) == [{"x": 2}]
    assert code_of([{"$project": {}}]) == 51272
    assert code_of([{"$project": {"a": 1, "b": 0}}]) == 31254


def test_add_fields_merges_into_embedded_documents():
    out = run([{"$addFields": {"b": {"d": 2}, "n": "$a"}}], DOCS[:1])
    assert out == [{"_id": 1, "a": 1, "b": {"c": 1, "d": 2}, "n": 1}]
    assert run([{"$set": {"a": "$$REMOVE"}}], DOCS[:1]) == [{"_id": 1, "b": {"c": 1}}]


def test_add_fields_does_not_modify_input():
    docs = [{"_id": 1, "b": {"c": 1}}]
    run([{"$set": {"b.d": 1}}], docs)
    assert docs == [{"_id": 1, "b": {"c": 1}}]


def test_unset():
    assert run([{"$unset": ["a", "b.c"]}], DOCS[:1]) == [{"_id": 1, "b": {}}]
    assert code_of([{"$unset": []}]) == 31119
    assert code_of([{"$unset": 1}]) == 31002


def test_skip_limit_count():
    assert [d["_id"] for d in run([{"$skip": 1}, {"$limit": 1}], DOCS)] == [2]
    assert run([{"$count": "n"}], DOCS) == [{"n": 3}]
    assert run([{"$count": "n"}], []) == []
    assert code_of([{"$limit": 0}]) == 15958
    assert code_of([{"$limit": 1.5}]) == 5107201
    assert code_of([{"$skip": -1}]) == 5107200
    assert code_of([{"$count": "a.b"}]) == 40160


def test_replace_root_and_with():
    assert run([{"$replaceRoot": {"newRoot": "$b"}}], DOCS[:1]) == [{"c": 1}]
    assert run([{"$replaceWith": {"x": "$a"}}], DOCS[:1]) == [{"x": 1}]
    assert code_of([{"$replaceWith": "$a"}], DOCS[:1]) == 40228


def test_sample_returns_requested_number_of_distinct_documents():
    out = run([{"$sample": {"size": 2}}], DOCS)
    assert len(out) == 2 and len({d["_id"] for d in out}) == 2
    assert code_of([{"$sample": {"size": 0}}]) == 28747
    assert code_of([{"$sample": {}}]) == 28749


def test_documents_stage_must_be_first():
    assert run([{"$documents": [{"x": 1}, {"x": 2}]}, {"$count": "n"}]) == [{"n": 2}]
    assert code_of([{"$match": {}}, {"$documents": []}]) == 40602


def test_redact_descends_and_prunes():
    doc = {"_id": 1, "level": 1, "sub": {"level": 5, "x": 1}, "keep": {"level": 0}}
    spec = {"$cond": [{"$gt": ["$level", 2]}, "$$PRUNE", "$$DESCEND"]}
    assert run([{"$redact": spec}], [doc]) == [{"_id": 1, "level": 1, "keep": {"level": 0}}]


def test_sort_and_top_k():
    docs = [{"_id": i, "v": (i * 7) % 10} for i in range(10)]
    assert [d["v"] for d in run([{"$sort": {"v": -1}}, {"$limit": 3}], docs)] == [9, 8, 7]
    assert [d["v"] for d in run([{"$sort": {"v": 1}}, {"$skip": 2}, {"$limit": 2}], docs)] == \
        [2, 3]
    assert code_of([{"$sort": {"v": 2}}]) == 15975


def test_unwind_forms_and_options():
    docs = [{"_id": 1, "t": ["a", "b"]}, {"_id": 2, "t": []}, {"_id": 3}, {"_id": 4, "t": "s"}]
    assert [(d["_id"], d.get("t")) for d in run([{"$unwind": "$t"}], docs)] == \
        [(1, "a"), (1, "b"), (4, "s")]
    out = run([{"$unwind": {"path": "$t", "includeArrayIndex": "i",
                            "preserveNullAndEmptyArrays": True}}], docs)
    assert [(d["_id"], d.get("i")) for d in out] == [(1, Int64(0)), (1, Int64(1)), (2, None),
                                                     (3, None), (4, None)]
    assert "t" not in out[2]


@pytest.mark.parametrize("spec,code", [
    (1, 15981), ({"path": "t"}, 28818), ({}, 28812), ({"path": "$t", "x": 1}, 28811),
    ({"path": "$t", "includeArrayIndex": "$i"}, 28822),
    ({"path": "$t", "preserveNullAndEmptyArrays": 1}, 28809),
])
def test_unwind_errors(spec, code):
    assert code_of([{"$unwind": spec}]) == code


def test_unsupported_stages_say_so():
    assert code_of([{"$geoNear": {}}]) == 238
    assert code_of([{"$out": "x"}]) == 238
