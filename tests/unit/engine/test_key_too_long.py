"""An index key too long to store (17280) fails its statement before anything of it is written:
no record without its entries, no entries removed by an update that then fails (records.py's
`check_keys` runs before the first write of a statement)."""
from __future__ import annotations

import pytest
from pymongo.errors import BulkWriteError, WriteError

from ginkgodb.client import MongoClient
from ginkgodb.client.runner import EngineChannel

LONG = "s" * 600


@pytest.fixture
def coll(engine):
    client = MongoClient(_channel=EngineChannel(engine))
    c = client.db.c
    c.create_index("k")          # a secondary index: inserts go document by document
    yield c
    client.close()


def _entries(coll) -> list:
    """Every document as the `k` index returns it, and as the collection scan does."""
    by_index = sorted(d["_id"] for d in coll.find({"k": {"$gte": ""}}).hint("k_1"))
    scanned = sorted(d["_id"] for d in coll.find({}).hint({"$natural": 1}))
    return [by_index, scanned]


def test_an_insert_whose_id_is_too_long_writes_nothing(coll):
    with pytest.raises(BulkWriteError) as err:
        coll.insert_many([{"_id": 1, "k": "a"}, {"_id": LONG, "k": "b"}, {"_id": 3, "k": "c"}], ordered=False)
    assert [e["code"] for e in err.value.details["writeErrors"]] == [17280]
    assert err.value.details["nInserted"] == 2
    assert _entries(coll) == [[1, 3], [1, 3]]
    assert coll.count_documents({}) == 2 and coll.estimated_document_count() == 2


def test_an_insert_whose_secondary_key_is_too_long_writes_nothing(coll):
    with pytest.raises(WriteError) as err:
        coll.insert_one({"_id": 2, "k": LONG})
    assert err.value.code == 17280 and "k_1" in str(err.value)
    assert coll.find_one({"_id": 2}) is None and _entries(coll) == [[], []]


def test_an_update_to_a_key_too_long_changes_nothing(coll):
    coll.insert_many([{"_id": 1, "k": "a"}, {"_id": 2, "k": "b"}])
    with pytest.raises(WriteError) as err:
        coll.update_one({"_id": 1}, {"$set": {"k": LONG}})
    assert err.value.code == 17280
    assert coll.find_one({"_id": 1}) == {"_id": 1, "k": "a"}
    assert _entries(coll) == [[1, 2], [1, 2]]
    assert coll.find_one({"k": "a"}, hint="k_1") == {"_id": 1, "k": "a"}
