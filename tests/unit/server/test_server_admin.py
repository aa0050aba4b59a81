"""fsyncLock and shutdown over the wire."""
from __future__ import annotations

import threading
import time

import pymongo
import pytest
from pymongo.errors import AutoReconnect, ConnectionFailure, ExecutionTimeout

from ginkgodb import MongoClient as EmbeddedClient
from ginkgodb.server.testing import running_server


def test_held_writes_use_no_worker_and_reads_stay_fast():
    with running_server(command_threads=4, quiet=True) as address:
        writers = pymongo.MongoClient(*address, maxPoolSize=60, serverSelectionTimeoutMS=5000)
        reader = pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000)
        try:
            writers.t.c.insert_one({"_id": 0})
            reader.t.c.find_one({})  # its connection is open before the lock
            writers.admin.command("fsync", lock=True)
            done: list = []
            threads = [threading.Thread(target=lambda i=i: done.append(writers.t.c.insert_one({"_id": i + 1})))
                       for i in range(40)]  # ten times more writers than command threads
            for t in threads:
                t.start()
            time.sleep(0.3)
            latencies = []
            for _ in range(20):
                start = time.perf_counter()
                assert reader.t.c.find_one({"_id": 0}) == {"_id": 0}
                latencies.append(time.perf_counter() - start)
            assert not done  # every write still held
            assert max(latencies) < 0.5, latencies  # reads never queue behind the held writes
            with pytest.raises(ExecutionTimeout):
                reader.t.command("insert", "c", documents=[{"_id": 99}], maxTimeMS=100)
            writers.admin.command("fsyncUnlock")
            for t in threads:
                t.join(10)
            assert len(done) == 40 and reader.t.c.count_documents({}) == 41
        finally:
            writers.close()
            reader.close()


def test_shutdown_stops_the_server_cleanly_and_flushes(tmp_path):
    path = str(tmp_path / "data")
    with running_server(path, subprocess=True, quiet=True) as address:
        client = pymongo.MongoClient(*address, serverSelectionTimeoutMS=2000)
        client.t.c.insert_many([{"i": i} for i in range(100)])
        with pytest.raises(AutoReconnect):  # mongod, too, goes away without answering
            client.admin.command("shutdown", timeoutSecs=5)
        deadline = time.monotonic() + 10
        while True:
            try:
                pymongo.MongoClient(*address, serverSelectionTimeoutMS=200).admin.command("ping")
            except ConnectionFailure:
                break
            assert time.monotonic() < deadline, "the server did not stop"
            time.sleep(0.1)
        client.close()
    reopened = EmbeddedClient(path)  # the data directory was closed cleanly: it opens, all there
    try:
        assert reopened.t.c.count_documents({}) == 100
    finally:
        reopened.close()
