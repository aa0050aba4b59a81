"""bulk_write and insert_many: runs by operation type, index mapping, pymongo's error shape."""
from __future__ import annotations

import bson
import pytest
from bson.raw_bson import RawBSONDocument
from pymongo import DeleteMany, DeleteOne, InsertOne, ReplaceOne, UpdateMany, UpdateOne
from pymongo.errors import BulkWriteError, DocumentTooLarge, InvalidOperation
from pymongo.write_concern import WriteConcern

from ginkgodb.client import bulk


def _ops():
    return [InsertOne({"_id": 1}), UpdateOne({"_id": 1}, {"$set": {"a": 1}}, upsert=True),
            InsertOne({"_id": 2}), DeleteOne({"_id": 1}), UpdateMany({}, {"$inc": {"n": 1}})]


def test_ordered_bulk_sends_consecutive_runs_in_order(coll, channel):
    channel.on("update", {"n": 1, "nModified": 1, "ok": 1.0})
    channel.on("delete", {"n": 1, "ok": 1.0})
    result = coll.bulk_write(_ops())
    assert [next(iter(c)) for c in channel.commands] == ["insert", "update", "insert", "delete",
                                                         "update"]
    assert all(c["ordered"] is True for c in channel.commands)
    assert (result.inserted_count, result.matched_count, result.modified_count,
            result.deleted_count) == (2, 2, 2, 1)


def test_unordered_bulk_groups_inserts_then_updates_then_deletes(coll, channel):
    channel.on("update", {"n": 2, "nModified": 2, "ok": 1.0})
    coll.bulk_write(_ops(), ordered=False)
    names = [next(iter(c)) for c in channel.commands]
    assert names == ["insert", "update", "delete"]
    assert len(channel.commands[0]["documents"]) == 2
    assert channel.commands[1]["updates"][0] == {"q": {"_id": 1}, "u": {"$set": {"a": 1}},
                                                 "multi": False, "upsert": True}
    assert channel.commands[0]["ordered"] is False


def test_upserted_ids_are_mapped_back_to_the_callers_operation_index(coll, channel):
    channel.on("update", {"n": 2, "nModified": 0,
                          "upserted": [{"index": 1, "_id": "new"}], "ok": 1.0})
    ops = [InsertOne({"_id": 0}), UpdateOne({"x": 1}, {"$set": {"a": 1}}),
           DeleteOne({}), ReplaceOne({"x": 2}, {"x": 2}, upsert=True)]
    result = coll.bulk_write(ops, ordered=False)
    assert result.upserted_ids == {3: "new"}
    assert result.upserted_count == 1 and result.matched_count == 1


def test_write_errors_become_bulk_write_error_with_pymongo_details(coll, channel):
    channel.on("insert", {"n": 1, "writeErrors": [
        {"index": 1, "code": 11000, "errmsg": "E11000 duplicate key error",
         "keyValue": {"_id": 1}}], "ok": 1.0})
    with pytest.raises(BulkWriteError) as info:
        coll.bulk_write([UpdateOne({}, {"$set": {"a": 1}}), InsertOne({"_id": 1}),
                         InsertOne({"_id": 1})], ordered=False)
    details = info.value.details
    assert info.value.code == 65
    assert set(details) == {"writeErrors", "writeConcernErrors", "nInserted", "nUpserted",
                            "nMatched", "nModified", "nRemoved", "upserted"}
    (error,) = details["writeErrors"]
    assert error["index"] == 2 and error["code"] == 11000 and error["op"] == {"_id": 1}
    assert details["nInserted"] == 1


def test_ordered_bulk_stops_after_the_run_with_a_write_error(coll, channel):
    channel.on("insert", {"n": 0, "writeErrors": [{"index": 0, "code": 11000, "errmsg": "dup"}],
                          "ok": 1.0})
    with pytest.raises(BulkWriteError):
        coll.bulk_write([InsertOne({"_id": 1}), DeleteMany({})])
    assert [next(iter(c)) for c in channel.commands] == ["insert"]


def test_insert_many_returns_ids_in_order_and_sets_them_on_documents(coll, channel):
    docs = [{"a": 1}, {"_id": 5}]
    result = coll.insert_many(docs)
    assert result.inserted_ids == [docs[0]["_id"], 5]
    sent = [bson.decode(d.raw) for d in channel.last["documents"]]
    assert sent == [{"a": 1, "_id": docs[0]["_id"]}, {"_id": 5}]


def test_insert_many_rejects_empty_and_mapping_arguments(coll):
    for bad in ([], {"a": 1}, None):
        with pytest.raises(TypeError, match="documents must be a non-empty list"):
            coll.insert_many(bad)


def test_bulk_write_rejects_empty_and_unknown_requests(coll):
    with pytest.raises(InvalidOperation, match="No operations to execute"):
        coll.bulk_write([])
    with pytest.raises(TypeError, match="is not a valid request"):
        coll.bulk_write([{"insertOne": {}}])
    with pytest.raises(TypeError, match="requests must be a list"):
        coll.bulk_write((InsertOne({}),))


def test_batches_split_at_max_write_batch_size(coll, channel, monkeypatch):
    monkeypatch.setattr(bulk, "MAX_WRITE_BATCH_SIZE", 3)
    channel.on("insert", lambda cmd: {"n": len(cmd["documents"]), "ok": 1.0})
    result = coll.bulk_write([InsertOne({"_id": i}) for i in range(7)])
    assert [len(c["documents"]) for c in channel.commands] == [3, 3, 1]
    assert result.inserted_count == 7


def test_write_error_index_counts_from_the_start_of_the_run_across_batches(coll, channel,
                                                                           monkeypatch):
    monkeypatch.setattr(bulk, "MAX_WRITE_BATCH_SIZE", 2)
    channel.on("insert", {"n": 2, "ok": 1.0},
               {"n": 0, "writeErrors": [{"index": 1, "code": 2, "errmsg": "bad"}], "ok": 1.0})
    with pytest.raises(BulkWriteError) as info:
        coll.bulk_write([InsertOne({"_id": i}) for i in range(4)], ordered=False)
    assert info.value.details["writeErrors"][0]["index"] == 3


def test_unacknowledged_unordered_bulk_sends_w0_and_returns_unacknowledged_result(client,
                                                                                  channel):
    coll = client.db.get_collection("c", write_concern=WriteConcern(w=0))
    result = coll.bulk_write([InsertOne({}), DeleteOne({})], ordered=False)
    assert result.acknowledged is False
    assert all(c["writeConcern"] == {"w": 0} for c in channel.commands)


def test_unacknowledged_ordered_bulk_stops_at_first_error_silently(client, channel):
    coll = client.db.get_collection("c", write_concern=WriteConcern(w=0))
    channel.on("insert", {"n": 0, "writeErrors": [{"index": 0, "code": 11000, "errmsg": "dup"}],
                          "ok": 1.0})
    result = coll.bulk_write([InsertOne({"_id": 1}), DeleteOne({})])
    assert result.acknowledged is False
    assert [next(iter(c)) for c in channel.commands] == ["insert"]


def test_document_larger_than_a_message_is_refused_before_sending(coll, channel, monkeypatch):
    monkeypatch.setattr(bulk, "MAX_MESSAGE_SIZE", 100)
    with pytest.raises(DocumentTooLarge, match="BSON document too large"):
        coll.insert_many([{"x": "y" * 200}])
    assert channel.commands == []


def _sent(channel):
    return [[bson.encode(d) for d in c["documents"]] for c in channel.commands if "insert" in c]


@pytest.mark.parametrize("sizes", [[10] * 7, [10, 60, 10, 10, 45, 5, 90, 1], [150, 10], [95, 95, 95]])
def test_raw_documents_are_cut_into_the_batches_plain_ones_get(coll, channel, monkeypatch, sizes):
    # a batch of RawBSONDocuments is cut from their sizes added up at once: the same commands,
    # with the same documents, as the one-statement-at-a-time loop gives for dicts
    monkeypatch.setattr(bulk, "MAX_WRITE_BATCH_SIZE", 4)
    monkeypatch.setattr(bulk, "MAX_MESSAGE_SIZE", 400)
    monkeypatch.setattr(bulk, "_COMMAND_OVERHEAD", 250)     # 150 bytes of statements a batch
    channel.on("insert", lambda cmd: {"n": len(cmd["documents"]), "ok": 1.0})
    docs = [{"_id": i, "s": "x" * (size - 20 if size > 20 else 0)} for i, size in enumerate(sizes)]
    coll.insert_many([dict(d) for d in docs])
    plain = _sent(channel)
    channel.commands.clear()
    result = coll.insert_many([RawBSONDocument(bson.encode(d)) for d in docs])
    assert _sent(channel) == plain and len(plain) > 1
    assert result.inserted_ids == []        # pymongo reports no ids for raw documents


@pytest.mark.parametrize("at", [0, 1, 3])
def test_raw_documents_too_large_fail_as_plain_ones_do(client, channel, monkeypatch, at):
    monkeypatch.setattr(bulk, "MAX_BSON_OBJECT_SIZE", 100)
    monkeypatch.setattr(bulk, "MAX_MESSAGE_SIZE", 400)
    monkeypatch.setattr(bulk, "_COMMAND_OVERHEAD", 250)
    channel.on("insert", lambda cmd: {"n": len(cmd["documents"]), "ok": 1.0})
    docs = [{"_id": i, "s": "x" * (150 if i == at else 10)} for i in range(5)]
    coll = client.db.get_collection("c", write_concern=WriteConcern(w=0))
    outcomes = []
    for batch in ([dict(d) for d in docs], [RawBSONDocument(bson.encode(d)) for d in docs]):
        channel.commands.clear()
        with pytest.raises(DocumentTooLarge) as info:
            coll.insert_many(batch, ordered=False)
        outcomes.append((str(info.value), _sent(channel)))
    assert outcomes[0] == outcomes[1]
    assert "BSON document too large" in outcomes[0][0]
