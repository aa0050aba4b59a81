"""Until transactions exist, a transaction is refused before anything runs, over the wire and
embedded alike, with a standalone mongod's answer (20 IllegalOperation): an "aborted" write
must never be kept. (Regression: the server once accepted `startTransaction` and committed each
write at once.)"""
from __future__ import annotations

import pymongo
import pytest
from pymongo.errors import OperationFailure

import ginkgodb

MESSAGE = "Transaction numbers are only allowed on a replica set member or mongos"


@pytest.fixture(params=["wire", "embedded"])
def any_client(request, server_address):
    if request.param == "wire":
        c = pymongo.MongoClient(*server_address, serverSelectionTimeoutMS=5000)
    else:
        c = ginkgodb.MongoClient()
    yield c
    c.close()


def test_aborted_update_is_not_kept(any_client):
    coll = any_client.txn_refused.a
    coll.drop()
    coll.insert_one({"_id": 1, "v": 0})
    s = any_client.start_session()
    s.start_transaction()
    with pytest.raises(OperationFailure) as info:
        coll.update_one({"_id": 1}, {"$set": {"v": 1}}, session=s)
    assert info.value.code == 20 and MESSAGE in str(info.value)
    s.abort_transaction()
    assert coll.find_one() == {"_id": 1, "v": 0}
    s.end_session()


def test_with_transaction_writes_nothing(any_client):
    coll = any_client.txn_refused.b
    coll.drop()

    def body(s):
        coll.insert_one({"_id": "x"}, session=s)
        coll.insert_one({"_id": "y"}, session=s)

    with any_client.start_session() as s:
        with pytest.raises(OperationFailure) as info:
            s.with_transaction(body)
    assert info.value.code == 20
    assert coll.count_documents({}) == 0


def test_commands_carrying_transaction_fields_are_refused(any_client):
    db = any_client.txn_refused
    db.c.drop()
    for extra in ({"startTransaction": True, "autocommit": False, "txnNumber": 1},
                  {"autocommit": False, "txnNumber": 2}, {"txnNumber": 3}):
        with pytest.raises(OperationFailure) as info:
            db.command({"insert": "c", "documents": [{"_id": 1}], "lsid": {"id": _uuid()}, **extra})
        assert info.value.code == 20
    assert db.c.count_documents({}) == 0
    for name in ("commitTransaction", "abortTransaction"):
        with pytest.raises(OperationFailure) as info:
            any_client.admin.command(name)
        assert info.value.code == 20


def _uuid():
    import uuid

    from bson.binary import Binary
    return Binary(uuid.uuid4().bytes, 4)
