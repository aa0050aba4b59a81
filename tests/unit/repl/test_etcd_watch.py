"""The etcd watch that wakes a member's coordinator when the primary key changes
(repl/etcd.py `watch`): an event per change, a stop that ends it."""
from __future__ import annotations

import threading
import time

import pytest
from support.etcd import EtcdProcess

from ginkgodb.repl import EtcdClient

pytestmark = pytest.mark.timeout(60)


def test_a_watch_reports_each_change_of_its_key_at_once(tmp_path):
    proc = EtcdProcess(tmp_path / "etcd")
    client = EtcdClient(proc.url)
    try:
        seen: list[float] = []
        stop = threading.Event()
        watcher = threading.Thread(target=client.watch, args=("/k", lambda: seen.append(time.monotonic()), stop),
                                   kwargs={"idle": 0.5})
        watcher.start()
        time.sleep(0.5)            # the watch is open (and went idle once at least)
        changed = time.monotonic()
        client.put("/k", {"host": "a"})
        client.put("/other", 1)    # another key: no event
        client.delete("/k")
        deadline = time.monotonic() + 5
        while len(seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(seen) == 2 and seen[0] - changed < 0.5
        stop.set()
        watcher.join(5)
        assert not watcher.is_alive()
    finally:
        client.close()
        proc.stop()
