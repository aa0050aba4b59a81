"""The client over the real engine: round trips on both storages, cursors, errors, durability."""
from __future__ import annotations

import datetime
import uuid

import pytest
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions
from bson.son import SON
from pymongo import DESCENDING, InsertOne, ReturnDocument, UpdateOne
from pymongo.errors import BulkWriteError, CollectionInvalid, DuplicateKeyError, OperationFailure

from ginkgodb import MongoClient
from ginkgodb.client import engines


@pytest.fixture(params=["memory", "lmdb"])
def client(request, tmp_path):
    c = MongoClient() if request.param == "memory" else MongoClient(str(tmp_path / "data"))
    yield c
    c.close()


def test_insert_find_update_delete_round_trip(client):
    coll = client.shop.items
    coll.insert_many([{"_id": i, "n": i, "tag": "even" if i % 2 == 0 else "odd"}
                      for i in range(10)])
    assert coll.count_documents({"tag": "even"}) == 5
    assert [d["_id"] for d in coll.find({"n": {"$gte": 7}}).sort("n", DESCENDING)] == [9, 8, 7]
    assert coll.update_many({"tag": "odd"}, {"$inc": {"n": 100}}).modified_count == 5
    assert coll.find_one({"_id": 3}) == {"_id": 3, "n": 103, "tag": "odd"}
    assert coll.delete_many({"n": {"$gt": 100}}).deleted_count == 5
    assert coll.estimated_document_count() == 5
    assert sorted(coll.distinct("tag")) == ["even"]


def test_cursor_reads_many_batches_and_closes_early(client):
    coll = client.db.c
    coll.insert_many([{"_id": i} for i in range(250)])
    assert [d["_id"] for d in coll.find(batch_size=7)] == list(range(250))
    cursor = coll.find().batch_size(5)
    assert next(cursor)["_id"] == 0 and cursor.cursor_id
    cursor.close()
    assert list(coll.find().skip(240).limit(3)) == [{"_id": 240}, {"_id": 241}, {"_id": 242}]


def test_upsert_and_find_one_and_update(client):
    coll = client.db.c
    result = coll.update_one({"_id": "k"}, {"$set": {"v": 1}}, upsert=True)
    assert result.upserted_id == "k" and result.matched_count == 0
    doc = coll.find_one_and_update({"_id": "k"}, {"$inc": {"v": 1}},
                                   return_document=ReturnDocument.AFTER)
    assert doc == {"_id": "k", "v": 2}


def test_duplicate_key_errors(client):
    coll = client.db.c
    coll.insert_one({"_id": 1})
    with pytest.raises(DuplicateKeyError):
        coll.insert_one({"_id": 1})
    with pytest.raises(BulkWriteError) as info:
        coll.bulk_write([InsertOne({"_id": 2}), InsertOne({"_id": 1}),
                         UpdateOne({"_id": 2}, {"$set": {"a": 1}})], ordered=False)
    details = info.value.details
    assert details["nInserted"] == 1 and details["nModified"] == 1
    assert [e["index"] for e in details["writeErrors"]] == [1]


def test_indexes_and_collections(client):
    db = client.db
    db.create_collection("c")
    with pytest.raises(CollectionInvalid):
        db.create_collection("c")
    assert db.c.create_index([("a", 1)], unique=True) == "a_1"
    assert set(db.c.index_information()) == {"_id_", "a_1"}
    db.c.drop_index("a_1")
    assert list(db.c.index_information()) == ["_id_"]
    assert db.list_collection_names() == ["c"]
    db.c.rename("d")
    assert db.list_collection_names() == ["d"]
    client.drop_database("db")
    assert "db" not in client.list_database_names()


def test_codec_options_apply_to_values_both_ways(client):
    coll = client.db.get_collection("c", codec_options=CodecOptions(
        document_class=SON, tz_aware=True, uuid_representation=UuidRepresentation.STANDARD))
    key = uuid.uuid4()
    when = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    coll.insert_one({"_id": key, "when": when})
    doc = coll.find_one({"_id": key})
    assert isinstance(doc, SON) and doc["_id"] == key and doc["when"] == when


def test_engine_errors_surface_as_operation_failure(client):
    with pytest.raises(OperationFailure) as info:
        client.db.c.find_one({"a": {"$nosuchop": 1}})
    assert info.value.code == 2


def test_data_survives_closing_and_reopening_the_directory(tmp_path):
    path = str(tmp_path / "data")
    with MongoClient(path) as first:
        first.db.c.insert_one({"_id": 1, "x": "kept"})
        with MongoClient(path) as second:
            assert second.db.c.find_one() == {"_id": 1, "x": "kept"}
    assert engines.open_count(path) == 0
    with MongoClient(path) as again:
        assert again.db.c.find_one({"_id": 1})["x"] == "kept"


def test_threads_share_one_client_with_a_context_each(client):
    import threading

    coll = client.db.c
    contexts = []

    def work(base: int) -> None:
        coll.insert_many([{"_id": base + i} for i in range(50)])
        contexts.append(client._runner.channel.context)   # kept alive: ids stay distinct

    threads = [threading.Thread(target=work, args=(n * 1000,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(list(coll.find())) == 200
    assert len({id(ctx) for ctx in contexts}) == 4


def test_path_like_and_scheme_spellings_open_the_same_directory(tmp_path):
    path = tmp_path / "data"
    with MongoClient(path) as by_path, MongoClient(f"ginkgodb://{path}") as by_scheme:
        by_path.db.c.insert_one({"_id": 1})
        assert by_scheme.db.c.find_one() == {"_id": 1}
        assert by_path._engine is by_scheme._engine
