"""The router's etcd locks (router/catalog.py): a claim outlives its TTL while its holder runs
(a long migration or resharding keeps it) and lapses when the holder stops renewing."""
from __future__ import annotations

import time

import pytest
from support.etcd import EtcdProcess

from ginkgodb.router.catalog import Catalog

pytestmark = pytest.mark.timeout(60)


def test_a_held_lock_is_renewed_past_its_ttl_and_released_by_unlock(tmp_path):
    proc = EtcdProcess(tmp_path / "etcd")
    first, second = Catalog(proc.url), Catalog(proc.url)
    try:
        lease = first.lock("t.c", ttl=2)
        assert lease is not None
        time.sleep(3.5)                             # past the TTL: renewed, still held
        assert second.lock("t.c", ttl=2) is None
        first.unlock(lease)
        again = second.lock("t.c", ttl=2)
        assert again is not None
        # a holder that stops renewing (a router that died) loses the claim after the TTL
        with second._held_lock:
            second._held.pop(again).set()
        time.sleep(3.5)
        assert first.lock("t.c", ttl=2) is not None
    finally:
        first.close()
        second.close()
        proc.stop()
