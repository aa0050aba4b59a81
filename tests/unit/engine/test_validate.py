"""validate (full or not): counts, missing and extra index entries, non-compliant documents."""
from __future__ import annotations

import pytest
from support.runner import Runner

from ginkgodb.storage.kv import prefix_end


@pytest.fixture
def run(engine):
    return Runner(engine)


def entries(engine, name, coll="c"):
    ix = engine.collection("test", coll).index(name)
    with engine.reader() as reader:
        return [k for k, _ in reader.scan(ix.prefix, prefix_end(ix.prefix))]


def test_a_consistent_collection_is_valid(run):
    run({"createIndexes": "c", "indexes": [{"key": {"x": 1}, "name": "x_1"}, {"key": {"a": 1}, "name": "a_1"}]})
    run.insert("c", *({"_id": i, "x": i, "a": [i, i + 10]} for i in range(5)))
    reply = run({"validate": "c", "full": True})
    assert reply["valid"] is True and reply["errors"] == [] and reply["warnings"] == []
    assert (reply["ns"], reply["nrecords"], reply["nIndexes"]) == ("test.c", 5, 3)
    assert reply["keysPerIndex"] == {"_id_": 5, "x_1": 5, "a_1": 10}
    assert reply["indexDetails"] == {"_id_": {"valid": True}, "x_1": {"valid": True}, "a_1": {"valid": True}}
    assert (reply["nInvalidDocuments"], reply["nNonCompliantDocuments"]) == (0, 0)
    assert reply["missingIndexEntries"] == reply["extraIndexEntries"] == reply["corruptRecords"] == []
    assert run({"validate": "c"})["valid"] is True


def test_missing_and_extra_entries_are_reported(run, engine):
    run({"createIndexes": "c", "indexes": [{"key": {"x": 1}, "name": "x_1"}]})
    run.insert("c", *({"_id": i, "x": i} for i in range(3)))
    doomed = entries(engine, "x_1")[1]
    with engine.write() as batch:   # damage the index behind the engine's back
        batch.txn.delete(doomed)
        batch.txn.put(doomed[:-8] + (99).to_bytes(8, "big"), b"")
    reply = run({"validate": "c", "full": True})
    assert reply["valid"] is False
    assert reply["indexDetails"]["x_1"] == {"valid": False} and reply["indexDetails"]["_id_"] == {"valid": True}
    assert reply["missingIndexEntries"] == [{"indexName": "x_1", "recordId": 2, "idKey": {"_id": 1},
                                             "indexKey": {"x": 1}}]
    assert reply["extraIndexEntries"] == [{"indexName": "x_1", "recordId": 99, "indexKey": {"x": 1}}]
    assert reply["errors"] == ["Index with name 'x_1' has inconsistencies.", "Detected 1 missing index entries.",
                               "Detected 1 extra index entries."]


def test_documents_failing_the_validator_are_counted_as_a_warning(run):
    run.insert("c", {"_id": 1, "n": 1}, {"_id": 2, "n": "x"})
    run({"collMod": "c", "validator": {"n": {"$type": "int"}}, "validationLevel": "moderate"})
    reply = run({"validate": "c"})
    assert reply["valid"] is True and reply["nNonCompliantDocuments"] == 1
    assert len(reply["warnings"]) == 1


def test_clustered_collections_validate(run):
    run({"create": "c", "clusteredIndex": {"key": {"_id": 1}, "unique": True}})
    run({"createIndexes": "c", "indexes": [{"key": {"y": 1}, "name": "y_1"}]})
    run.insert("c", *({"_id": f"k{i}", "y": i} for i in range(4)))
    reply = run({"validate": "c", "full": True})
    assert reply["valid"] is True and reply["keysPerIndex"] == {"_id_": 4, "y_1": 4}


def test_validate_errors(run):
    assert run.error({"validate": "nope"})["code"] == 26
    run({"create": "c"})
    run({"create": "v", "viewOn": "c"})
    assert run.error({"validate": "v"})["code"] == 166
    err = run.error({"validate": "c", "full": True, "background": True})
    assert err["code"] == 72
    assert run.error({"validate": "c", "repair": True})["code"] == 238


def test_pymongo_validate_collection_embedded_and_over_the_wire():
    import pymongo

    from ginkgodb import MongoClient
    from ginkgodb.server.testing import running_server
    embedded = MongoClient()
    embedded.t.c.insert_many([{"_id": i, "x": i} for i in range(3)])
    embedded.t.c.create_index("x")
    reply = embedded.t.validate_collection("c", full=True)
    assert reply["valid"] is True and reply["keysPerIndex"] == {"_id_": 3, "x_1": 3}
    with running_server(None) as (host, port):
        client = pymongo.MongoClient(host, port, directConnection=True)
        try:
            client.t.c.insert_many([{"_id": i} for i in range(4)])
            reply = client.t.validate_collection("c", full=True)
            assert reply["valid"] is True and reply["nrecords"] == 4
        finally:
            client.close()
