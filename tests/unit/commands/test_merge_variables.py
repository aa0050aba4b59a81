"""$merge's whenMatched pipeline sees `$$new` (the incoming document), the stage's `let`
(evaluated against the incoming document) and the command's `let`."""
from __future__ import annotations


def setup(run):
    run.insert("t", {"_id": 1, "v": 1}, {"_id": 2, "v": 2})
    run.insert("src", {"_id": 1, "v": 5}, {"_id": 3, "v": 7})


def merge(run, spec, **extra):
    return run({"aggregate": "src", "pipeline": [{"$merge": {"into": "t", **spec}}], "cursor": {}, **extra})


def test_new_is_the_incoming_document(run):
    setup(run)
    merge(run, {"whenMatched": [{"$set": {"v": {"$add": ["$v", "$$new.v"]}, "from": "$$new._id"}}]})
    assert run.find("t") == [{"_id": 1, "v": 6, "from": 1}, {"_id": 2, "v": 2}, {"_id": 3, "v": 7}]


def test_stage_let_and_command_let(run):
    setup(run)
    merge(run, {"let": {"k": 10, "incoming": "$v"},
                "whenMatched": [{"$set": {"v": {"$add": ["$$incoming", "$$k", "$$c", "$$new.v"]}}}]},
          let={"c": 100})
    assert run.find("t", {"_id": 1}) == [{"_id": 1, "v": 120}]


def test_let_needs_a_pipeline(run):
    setup(run)
    reply = run.error({"aggregate": "src", "cursor": {},
                       "pipeline": [{"$merge": {"into": "t", "let": {"a": 1}, "whenMatched": "merge"}}]})
    assert (reply["code"], reply["errmsg"]) == (51199, "Cannot use 'let' variables with 'whenMatched: merge' mode")
    assert run.find("t") == [{"_id": 1, "v": 1}, {"_id": 2, "v": 2}]
