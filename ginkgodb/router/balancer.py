"""The balancer: splits chunks grown past the chunk size, drains shards being removed, evens
chunk counts across shards; one migration per collection per round.

A thread in every router; the `locks/balancer` lease makes one router balance at a time. Each
round, for each sharded collection with balancing on: chunks above the collection's chunk size
are split (or marked jumbo, router/range_ops.py); a chunk on a draining shard moves to the
least-loaded shard that is not draining; else, when the most-loaded shard owns at least
`THRESHOLD` more chunks than the least-loaded one, its lowest non-jumbo chunk moves there.
"""
from __future__ import annotations

import logging
import threading
from typing import Optional

from ..errors import CommandError
from .admin import balancer_state
from .chunks import Chunk, ChunkMap
from .migration import delete_pending_ranges, move_chunk
from .range_ops import split_by_size
from .shards import ShardReplyError
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


def plan_collection(cmap: ChunkMap, targets: list[str], draining: set[str]) -> Optional[tuple[Chunk, str]]:
    """The one migration a round makes for a collection: (chunk, recipient), or None. Draining
    shards give their chunks first; targets are the shards that are not draining. Pure."""
    if not targets:
        return None
    counts = {s: 0 for s in targets}
    for c in cmap.chunks:
        if c.shard in counts:
            counts[c.shard] += 1
    least = min(counts, key=lambda s: (counts[s], s))
    leaving = next((c for c in cmap.chunks if c.shard in draining and not c.jumbo), None)
    if leaving is not None:
        return leaving, least
    plan = plan_move(counts, targets)
    if plan is None:
        return None
    donor, recipient = plan
    chunk = next((c for c in cmap.chunks if c.shard == donor and not c.jumbo), None)
    return (chunk, recipient) if chunk is not None else None


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
            docs = self.router.refresh_shards()
            draining = {d["_id"] for d in docs if d.get("draining")}
            targets = [d["_id"] for d in docs if not d.get("draining")]
            for coll in self.router.catalog.collections():
                if coll.get("noBalance"):
                    continue
                ns = coll["_id"]
                try:
                    split_by_size(self.router, ns)
                    cmap = self.router.chunk_map(ns, refresh=True)
                    plan = plan_collection(cmap, targets, draining) if cmap is not None else None
                    if plan is None:
                        continue
                    move_chunk(self.router, ns, plan[0], plan[1])
                    moved += 1
                except (CommandError, ShardReplyError) as exc:
                    log.warning("balancer: a round on %s failed: %s", ns, exc)
        finally:
            self.in_round = False
            self.rounds += 1
            self.router.catalog.unlock(lease)
        return moved
