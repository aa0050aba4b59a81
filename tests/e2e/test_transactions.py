"""pymongo's transactions against `ginkgodb serve` (a standalone: ginkgodb offers them there too)
and the embedded client, with the same commands: commit, abort, with_transaction, conflicts."""
from __future__ import annotations

import random
import threading

import pymongo
import pytest
from pymongo.errors import OperationFailure

import ginkgodb


@pytest.fixture(params=["wire", "embedded"])
def any_client(request, server_address, tmp_path):
    if request.param == "wire":
        c = pymongo.MongoClient(*server_address, serverSelectionTimeoutMS=5000)
    else:
        c = ginkgodb.MongoClient(str(tmp_path / "embedded"))
    yield c
    c.close()


def test_aborted_update_is_not_kept(any_client):
    """The defect that started this: an aborted transaction's writes used to stay."""
    coll = any_client.txn_e2e.a
    coll.drop()
    coll.insert_one({"_id": 1, "v": 0})
    s = any_client.start_session()
    s.start_transaction()
    coll.update_one({"_id": 1}, {"$set": {"v": 1}}, session=s)
    assert coll.find_one({"_id": 1}, session=s) == {"_id": 1, "v": 1}
    assert coll.find_one() == {"_id": 1, "v": 0}
    s.abort_transaction()
    assert coll.find_one() == {"_id": 1, "v": 0}
    s.end_session()


def test_with_transaction_checkout(any_client):
    """The issue's example: decrement stock and record an order, or neither."""
    shop = any_client.txn_e2e
    shop.stock.drop()
    shop.orders.drop()
    shop.stock.insert_one({"_id": "book", "qty": 1})

    def checkout(s):
        res = shop.stock.update_one({"_id": "book", "qty": {"$gte": 1}}, {"$inc": {"qty": -1}}, session=s)
        if res.modified_count != 1:
            raise ValueError("sold out")
        shop.orders.insert_one({"item": "book"}, session=s)

    with any_client.start_session() as s:
        s.with_transaction(checkout)
    with any_client.start_session() as s, pytest.raises(ValueError):
        s.with_transaction(checkout)
    assert shop.stock.find_one()["qty"] == 0 and shop.orders.count_documents({}) == 1


def test_concurrent_transfers_keep_the_total(any_client):
    """4 threads move money between 5 accounts in transactions; conflicts are retried by
    with_transaction (TransientTransactionError); the total never changes."""
    bank = any_client.txn_e2e.accounts
    bank.drop()
    bank.insert_many([{"_id": i, "balance": 100} for i in range(5)])
    errors: list = []

    def worker(seed):
        rng = random.Random(seed)
        try:
            with any_client.start_session() as s:
                for _ in range(25):
                    a, b = rng.sample(range(5), 2)
                    s.with_transaction(lambda s, a=a, b=b: (
                        bank.update_one({"_id": a}, {"$inc": {"balance": -1}}, session=s),
                        bank.update_one({"_id": b}, {"$inc": {"balance": 1}}, session=s)))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sum(d["balance"] for d in bank.find()) == 500


def test_write_conflict_carries_the_transient_label(any_client):
    coll = any_client.txn_e2e.c
    coll.drop()
    coll.insert_one({"_id": 1, "n": 0})
    s1, s2 = any_client.start_session(), any_client.start_session()
    s1.start_transaction()
    s2.start_transaction()
    coll.update_one({"_id": 1}, {"$inc": {"n": 1}}, session=s1)
    with pytest.raises(OperationFailure) as info:
        coll.update_one({"_id": 1}, {"$inc": {"n": 1}}, session=s2)
    assert info.value.code == 112 and info.value.has_error_label("TransientTransactionError")
    s2.abort_transaction()
    s1.commit_transaction()
    assert coll.find_one()["n"] == 1
