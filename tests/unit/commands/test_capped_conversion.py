"""cloneCollectionAsCapped and convertToCapped: the copy, eviction by size, mongod's errors."""
from __future__ import annotations


def fill(run, n=100):
    run({"createIndexes": "c", "indexes": [{"key": {"x": 1}, "name": "x_1"}]})
    run.insert("c", *({"_id": i, "x": "y" * 100} for i in range(n)))


def options(run, name):
    return run({"listCollections": 1, "filter": {"name": name}})["cursor"]["firstBatch"][0]["options"]


def test_clone_keeps_the_newest_documents_that_fit(run):
    fill(run)
    run({"cloneCollectionAsCapped": "c", "toCollection": "d", "size": 4096})
    docs = run.find("d")
    assert 0 < len(docs) < 100 and docs[-1]["_id"] == 99
    assert [d["_id"] for d in docs] == list(range(100 - len(docs), 100))
    assert options(run, "d") == {"capped": True, "size": 4096}
    assert len(run.find("c")) == 100   # the source is unchanged
    run.insert("d", {"_id": 100, "x": "y" * 100})
    assert run.find("d")[-1]["_id"] == 100 and run.find("d")[0]["_id"] > docs[0]["_id"]


def test_convert_keeps_the_name_and_only_the_id_index(run):
    fill(run, 10)
    run({"convertToCapped": "c", "size": 100000})
    assert options(run, "c") == {"capped": True, "size": 100000}
    assert [d["_id"] for d in run.find("c")] == list(range(10))
    assert [ix["name"] for ix in run({"listIndexes": "c"})["cursor"]["firstBatch"]] == ["_id_"]
    names = [c["name"] for c in run({"listCollections": 1})["cursor"]["firstBatch"]]
    assert names == ["c"]


def test_errors(run):
    fill(run, 3)
    run({"create": "d"})
    run({"create": "v", "viewOn": "c"})
    cases = [
        ({"convertToCapped": "nope", "size": 10}, 26, "source collection test.nope does not exist"),
        ({"cloneCollectionAsCapped": "c", "toCollection": "d", "size": 10}, 48,
         "cloneCollectionAsCapped failed - destination collection test.d already exists. source: test.c"),
        ({"cloneCollectionAsCapped": "c", "toCollection": "e"}, 40414,
         "BSON field 'cloneCollectionAsCapped.size' is missing but a required field"),
        ({"convertToCapped": "c"}, 40414, "BSON field 'convertToCapped.size' is missing but a required field"),
        ({"convertToCapped": "c", "size": "x"}, 14,
         "BSON field 'convertToCapped.size' is the wrong type 'string', expected types "
         "'[long, int, decimal, double]'"),
        ({"cloneCollectionAsCapped": "v", "toCollection": "e", "size": 10}, 166,
         "cloneCollectionAsCapped not supported for views: test.v"),
    ]
    for cmd, code, message in cases:
        err = run.error(cmd)
        assert (err["code"], err["errmsg"]) == (code, message), cmd
    assert "capped" not in options(run, "c")
    assert sorted(c["name"] for c in run({"listCollections": 1})["cursor"]["firstBatch"]) == ["c", "d", "v"]


def test_coll_mod_resizes_a_capped_collection(run):
    run({"create": "c", "capped": True, "size": 100000})
    run.insert("c", *({"_id": i, "x": "y" * 100} for i in range(50)))
    run({"collMod": "c", "cappedSize": 4096, "cappedMax": 10})
    assert options(run, "c") == {"capped": True, "size": 4096, "max": 10}
    run.insert("c", {"_id": 50, "x": "y"})
    assert [d["_id"] for d in run.find("c")] == list(range(41, 51))


def test_coll_mod_capped_errors(run):
    run({"create": "plain"})
    run({"create": "c", "capped": True, "size": 4096})
    err = run.error({"collMod": "plain", "cappedSize": 4096})
    assert (err["code"], err["errmsg"]) == (72, "Collection must be capped.")
    err = run.error({"collMod": "c", "cappedSize": 0})
    assert (err["code"], err["errmsg"]) == (2, "BSON field 'cappedSize' value must be >= 1, actual value '0'")
    assert run.error({"collMod": "c", "cappedMax": "x"})["code"] == 14
    assert options(run, "c") == {"capped": True, "size": 4096}
