"""The balancer: evens chunk counts across shards, one migration per round.

A thread in every router; the `locks/balancer` lease makes one router balance at a time. Each
round, for each sharded collection with balancing on, when the most-loaded shard owns at least
`THRESHOLD` more chunks than the least-loaded one, its lowest non-jumbo chunk moves there.
"""
from __future__ import annotations

import logging
import threading
from typing import Optional

from ..errors import CommandError
from .admin import balancer_state
from .migration import delete_pending_ranges, move_chunk
from .state import Router

THRESHOLD = 2
log = logging.getLogger("ginkgodb.router.balancer")


def plan_move(counts: dict[str, int], shards: list[str]) -> Optional[tuple[str, str]]:
    """(donor, recipient) when the counts are uneven enough, else None. Pure."""
    full = {s: counts.get(s, 0) for s in shards}
    if len(full) < 2:
        return None
    donor = max(full, key=lambda s: (full[s], s))
    recipient = min(full, key=lambda s: (full[s], s))
    return (donor, recipient) if full[donor] - full[recipient] >= THRESHOLD else None


class Balancer:
    def __init__(self, router: Router, interval: float) -> None:
        self.router = router
        self.interval = interval
        self.rounds = 0
        self.in_round = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="balancer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                delete_pending_ranges(self.router)
                if balancer_state(self.router).get("mode", "full") != "off":
                    self.round()
            except Exception:   # a failed round is retried at the next; the router keeps serving
                log.exception("balancer round failed")

    def round(self) -> int:
        """One balancing round; how many chunks moved."""
        lease = self.router.catalog.lock("balancer", ttl=60)
        if lease is None:
            return 0
        moved = 0
        self.in_round = True
        try:
            shards = self.router.shard_names()
            for coll in self.router.catalog.collections():
                if coll.get("noBalance"):
                    continue
                cmap = self.router.chunk_map(coll["_id"], refresh=True)
                if cmap is None:
                    continue
                plan = plan_move(cmap.counts(), shards)
                if plan is None:
                    continue
                donor, recipient = plan
                chunk = next((c for c in cmap.chunks if c.shard == donor and not c.jumbo), None)
                if chunk is None:
                    continue
                try:
                    move_chunk(self.router, coll["_id"], chunk, recipient)
                    moved += 1
                except CommandError as exc:
                    log.warning("balancer: moving a chunk of %s failed: %s", coll["_id"], exc)
        finally:
            self.in_round = False
            self.rounds += 1
            self.router.catalog.unlock(lease)
        return moved
