"""Text search over the wire with pymongo: a text index built from a persisted data directory,
queried with `$text`, ranked by `{$meta: "textScore"}`, and its errors as a driver sees them."""
from __future__ import annotations

import pymongo
import pytest
from pymongo.errors import OperationFailure

from ginkgodb.server.testing import running_server


def test_text_search_over_the_wire(tmp_path):
    with running_server(str(tmp_path / "data"), quiet=True) as address:
        client = pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000)
        try:
            shop = client.shop.products
            shop.insert_many([{"_id": 1, "title": "red running shoes"},
                              {"_id": 2, "title": "blue shoes"},
                              {"_id": 3, "title": "red hat"}])
            assert shop.create_index([("title", pymongo.TEXT)], default_language="english") == "title_text"
            shop.insert_one({"_id": 4, "title": "shoes shoes shoes"})
            found = list(shop.find({"$text": {"$search": "shoe red"}}, {"score": {"$meta": "textScore"}})
                         .sort([("score", {"$meta": "textScore"})]))
            assert [d["_id"] for d in found][:2] == [4, 1] and {d["_id"] for d in found[2:]} == {2, 3}
            assert [d["score"] for d in found] == pytest.approx([1.75, 4 / 3, 0.75, 0.75])
            ranked = list(shop.aggregate([{"$match": {"$text": {"$search": "hat"}}},
                                          {"$project": {"_id": 1, "s": {"$meta": "textScore"}}}]))
            assert ranked == [{"_id": 3, "s": 0.75}]
            plan = shop.find({"$text": {"$search": "hat"}}).explain()["queryPlanner"]["winningPlan"]
            assert plan["stage"] == "TEXT_MATCH"
            with pytest.raises(OperationFailure) as failure:
                shop.create_index([("body", pymongo.TEXT)])
            assert failure.value.code == 85
            with pytest.raises(OperationFailure) as failure:
                list(client.shop.other.find({"$text": {"$search": "x"}}))
            assert failure.value.code == 27
        finally:
            client.close()


def test_text_synonyms_over_the_wire(tmp_path):
    """The `synonyms` extension as a driver uses it: createIndex's option, listIndexes, and a
    change to the synonym collection seen by the next query."""
    with running_server(str(tmp_path / "data"), quiet=True) as address:
        client = pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000)
        try:
            db = client.shop
            db.shop_synonyms.insert_one({"mappingType": "equivalent", "synonyms": ["sneaker", "trainer"]})
            db.products.insert_many([{"_id": 1, "title": "white sneakers"}, {"_id": 2, "title": "trainers"},
                                     {"_id": 3, "title": "boots"}])
            db.products.create_index([("title", pymongo.TEXT)], synonyms="shop_synonyms")
            assert db.products.index_information()["title_text"]["synonyms"] == "shop_synonyms"
            found = sorted(d["_id"] for d in db.products.find({"$text": {"$search": "sneaker"}}))
            assert found == [1, 2]
            db.shop_synonyms.insert_one({"mappingType": "explicit", "input": ["boot"],
                                         "synonyms": ["boot", "sneaker"]})
            assert sorted(d["_id"] for d in db.products.find({"$text": {"$search": "boot"}})) == [1, 3]
            with pytest.raises(OperationFailure) as failure:
                db.other.create_index([("title", pymongo.TEXT)], synonyms=7)
            assert failure.value.code == 67
        finally:
            client.close()


def test_background_text_index_build_over_the_wire(tmp_path):
    """createIndex with `textIndexBuild: "background"` returns, `$text` answers at once and
    after the build, and `$indexStats` reports the build until it ends."""
    import time
    with running_server(str(tmp_path / "data"), quiet=True) as address:
        client = pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000)
        try:
            coll = client.shop.products
            coll.insert_many([{"_id": i, "title": "red shoes" if i % 2 else "blue hat"} for i in range(2000)])
            coll.create_index([("title", pymongo.TEXT)], textIndexBuild="background")
            assert coll.count_documents({"$text": {"$search": "shoes"}}) == 1000
            deadline = time.monotonic() + 30
            while any(s.get("building") for s in coll.aggregate([{"$indexStats": {}}])):
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert coll.count_documents({"$text": {"$search": "hat"}}) == 1000
            assert coll.index_information()["title_text"]["textIndexBuild"] == "background"
        finally:
            client.close()
