"""Several threads sharing one embedded client get exact results (document-level atomicity)."""
from __future__ import annotations

import threading

import pytest

from ginkgodb import MongoClient


@pytest.mark.parametrize("durable", [False, True])
def test_four_threads_increment_one_document_exactly(tmp_path, durable):
    client = MongoClient(str(tmp_path / "d") if durable else None)
    coll = client.db.counters
    coll.insert_one({"_id": 1, "n": 0, "log": []})
    coll.create_index("n")

    def work(t: int) -> None:
        for i in range(1000):
            coll.update_one({"_id": 1}, {"$inc": {"n": 1}})
            if i % 100 == 0:
                coll.find_one_and_update({"_id": 1}, {"$push": {"log": (t, i)}})

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    doc = coll.find_one({"_id": 1})
    assert doc["n"] == 4000
    assert len(doc["log"]) == 40
    assert coll.find_one({"n": 4000}, hint="n_1")["_id"] == 1  # the index followed every update
    client.close()
