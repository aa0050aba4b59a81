"""serve --eventLoop: asyncio's loop or uvloop, each serving the same commands."""
from __future__ import annotations

import pymongo
import pytest

from ginkgodb.server.event_loop import loop_factory
from ginkgodb.server.testing import running_server


def test_the_choices():
    assert loop_factory("asyncio") is None
    with pytest.raises(ValueError, match="unknown event loop"):
        loop_factory("trio")
    uvloop = pytest.importorskip("uvloop", reason="uvloop is a test dependency (pyproject [test])")
    assert loop_factory("uvloop") is uvloop.new_event_loop
    assert loop_factory("auto") is uvloop.new_event_loop


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_server_on_each_loop_serves_reads_writes_and_cursors(tmp_path, loop):
    if loop == "uvloop":
        pytest.importorskip("uvloop", reason="uvloop is a test dependency (pyproject [test])")
    with running_server(str(tmp_path / "data"), subprocess=True, quiet=True, event_loop=loop) as (host, port):
        client = pymongo.MongoClient(host, port, serverSelectionTimeoutMS=10_000)
        try:
            coll = client.db.c
            coll.insert_many([{"_id": i, "s": "x" * 100} for i in range(300)])
            assert coll.find_one({"_id": 7})["_id"] == 7
            assert len(list(coll.find().batch_size(50))) == 300     # getMores
            assert client.admin.command("ping")["ok"] == 1.0
        finally:
            client.close()
