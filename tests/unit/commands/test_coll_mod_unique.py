"""collMod `index.prepareUnique` then `index.unique: true`: mongod 7.0's replies and errors."""
from __future__ import annotations


def setup(run):
    run({"createIndexes": "c", "indexes": [{"key": {"x": 1}, "name": "x_1"}]})
    run.insert("c", {"_id": 1, "x": 1}, {"_id": 2, "x": 1}, {"_id": 3, "x": 2})


def test_prepare_unique_refuses_new_duplicates_and_lists_the_option(run):
    setup(run)
    reply = run({"collMod": "c", "index": {"keyPattern": {"x": 1}, "prepareUnique": True}})
    assert (reply["prepareUnique_old"], reply["prepareUnique_new"]) == (False, True)
    err = run.insert("c", {"_id": 4, "x": 2})["writeErrors"][0]
    assert err["code"] == 11000
    assert err["errmsg"] == "E11000 duplicate key error collection: test.c index: x_1 dup key: { x: 2 }"
    run.insert("c", {"_id": 5, "x": 3})
    assert run({"update": "c", "updates": [{"q": {"_id": 5}, "u": {"$set": {"x": 2}}}]})["writeErrors"][0][
        "code"] == 11000
    spec = [ix for ix in run({"listIndexes": "c"})["cursor"]["firstBatch"] if ix["name"] == "x_1"][0]
    assert spec == {"v": 2, "key": {"x": 1}, "name": "x_1", "prepareUnique": True}


def test_unique_conversion_lists_the_violations_and_changes_nothing(run):
    setup(run)
    run({"collMod": "c", "index": {"name": "x_1", "prepareUnique": True}})
    err = run.error({"collMod": "c", "index": {"keyPattern": {"x": 1}, "unique": True}})
    assert (err["code"], err["codeName"]) == (359, "CannotConvertIndexToUnique")
    assert err["errmsg"] == ("Cannot convert the index to unique. Please resolve conflicting documents before "
                             "running collMod again.")
    assert err["violations"] == [{"ids": [1, 2]}]
    spec = [ix for ix in run({"listIndexes": "c"})["cursor"]["firstBatch"] if ix["name"] == "x_1"][0]
    assert "unique" not in spec


def test_unique_conversion_after_the_duplicates_are_resolved(run):
    setup(run)
    run({"collMod": "c", "index": {"name": "x_1", "prepareUnique": True}})
    run({"delete": "c", "deletes": [{"q": {"_id": 2}, "limit": 1}]})
    reply = run({"collMod": "c", "index": {"keyPattern": {"x": 1}, "unique": True}})
    assert reply["unique_new"] is True
    spec = [ix for ix in run({"listIndexes": "c"})["cursor"]["firstBatch"] if ix["name"] == "x_1"][0]
    assert spec == {"v": 2, "key": {"x": 1}, "name": "x_1", "unique": True}
    assert run.insert("c", {"_id": 9, "x": 1})["writeErrors"][0]["code"] == 11000
    plan = run.explain("c", {"x": 1})["queryPlanner"]["winningPlan"]
    assert plan["inputStage"]["isUnique"] is True


def test_unique_conversion_needs_prepare_unique_first(run):
    setup(run)
    err = run.error({"collMod": "c", "index": {"keyPattern": {"x": 1}, "unique": True}})
    assert (err["code"], err["errmsg"]) == (
        72, "Cannot make index unique with 'prepareUnique=false'. Run 'collMod' to set it first.")


def test_unique_false_and_unknown_indexes_are_refused(run):
    setup(run)
    err = run.error({"collMod": "c", "index": {"keyPattern": {"x": 1}, "unique": False}})
    assert (err["code"], err["errmsg"]) == (2, "collMod does not support converting an index to 'unique: false'")
    err = run.error({"collMod": "c", "index": {"keyPattern": {"y": 1}, "prepareUnique": True}})
    assert err["code"] == 27
