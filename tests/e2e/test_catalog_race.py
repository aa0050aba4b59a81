"""Regression (found by an ODM's test suite): with one client dropping and creating a collection
while another inserts and then reads by `_id`, the acknowledged document was sometimes missing
from the next read (22 of 2,000 rounds measured): a failed `create` rolled back by reloading the
catalog through an empty state, and the `_id` read, which runs on the event loop, saw it. The
catalog is now published only whole, at commit (docs/design/seams.md)."""
from __future__ import annotations

import threading

import pymongo

from ginkgodb.server.testing import running_server

ROUNDS = 2000


def test_acknowledged_insert_is_visible_to_the_next_read_during_concurrent_create(tmp_path):
    with running_server(str(tmp_path / "data"), quiet=True) as (host, port):
        ddl = pymongo.MongoClient(host, port)
        app = pymongo.MongoClient(host, port)
        misses = []
        for i in range(ROUNDS):
            ddl.race.c.drop()

            def create() -> None:
                try:
                    ddl.race.create_collection("c")
                except (pymongo.errors.CollectionInvalid, pymongo.errors.OperationFailure) as exc:
                    assert getattr(exc, "code", 48) == 48  # the insert created it first

            creator = threading.Thread(target=create)
            creator.start()
            app.race.c.insert_one({"_id": i})
            if app.race.c.find_one({"_id": i}) is None:
                misses.append(i)
            creator.join()
        ddl.close()
        app.close()
    assert misses == [], f"{len(misses)} of {ROUNDS} acknowledged inserts were not visible"
