"""The balancer: splits chunks grown past the chunk size, drains shards being removed, evens
chunk counts across shards; one migration per collection per round.

A thread in every router; the `locks/balancer` lease makes one router balance at a time. Each
round, for each sharded collection with balancing on: chunks are split at zone bounds, and
those above the collection's chunk size are split (or marked jumbo, router/range_ops.py); a
chunk on a shard it may not live on (a draining shard, or outside its zone) moves to the
least-loaded shard it may live on; else, within each zone and among the chunks outside zones,
when the most-loaded shard owns at least `THRESHOLD` more chunks than the least-loaded one,
its lowest non-jumbo chunk moves there.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Optional

from ..errors import CommandError
from .admin import _sharded, balancer_state
from .chunks import Chunk, ChunkMap
from .migration import delete_pending_ranges, move_chunk
from .range_ops import commit_split, split_by_size
from .shards import ShardReplyError
from .state import Router
from .zones import Zone, boundary_points, layout, zone_of

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


def plan_collection(cmap: ChunkMap, targets: list[str], draining: set[str],
                    zones: Sequence[Zone] = ()) -> Optional[tuple[Chunk, str]]:
    """The one migration a round makes for a collection: (chunk, recipient), or None. Pure.

    A chunk's allowed shards are its zone's shards (the whole of a zone range: chunks are split
    at zone bounds first) or, outside every zone, any shard; targets are the shards that are not
    draining. First a chunk on a shard it is not allowed on (a draining shard, or outside its
    zone) moves to the least-loaded allowed shard; else counts are evened within each zone and
    among the chunks outside zones."""
    groups: dict[Optional[Zone], list[Chunk]] = {}
    for c in cmap.chunks:
        groups.setdefault(zone_of(cmap, c, list(zones)), []).append(c)

    def allowed(zone: Optional[Zone]) -> list[str]:
        return [s for s in targets if zone is None or s in zone.shards]

    def least(zone: Optional[Zone], shards: list[str]) -> str:
        counts = {s: 0 for s in shards}
        for c in groups[zone]:
            if c.shard in counts:
                counts[c.shard] += 1
        return min(counts, key=lambda s: (counts[s], s))
    for zone, chunks in groups.items():
        shards = allowed(zone)
        misplaced = next((c for c in chunks if c.shard not in shards and not c.jumbo), None)
        if shards and misplaced is not None:
            return misplaced, least(zone, shards)
    for zone, chunks in groups.items():
        shards = allowed(zone)
        counts = {s: 0 for s in shards}
        for c in chunks:
            if c.shard in counts:
                counts[c.shard] += 1
        plan = plan_move(counts, shards)
        if plan is None:
            continue
        donor, recipient = plan
        chunk = next((c for c in chunks if c.shard == donor and not c.jumbo), None)
        if chunk is not None:
            return chunk, recipient
    return None


def violation(cmap: ChunkMap, targets: list[str], draining: set[str], zones: Sequence[Zone] = ()) -> Optional[str]:
    """balancerCollectionStatus' firstComplianceViolation: "draining" (a chunk on a draining
    shard), "zoneViolation" (a chunk outside its zone's shards, or across a zone bound), "chunksImbalance" (the balancer
    would move a chunk), or None. Pure."""
    if any(c.shard in draining for c in cmap.chunks):
        return "draining"
    for c in cmap.chunks:
        low, high = cmap.bounds_bytes(c)
        zone = zone_of(cmap, c, list(zones))
        if zone is not None and c.shard not in zone.shards:
            return "zoneViolation"
        if zone is None and any(z.low < high and low < z.high for z in zones):   # straddles a zone bound
            return "zoneViolation"
    return "chunksImbalance" if plan_collection(cmap, targets, draining, zones) is not None else None


def collection_status(router: Router, cmd: Mapping) -> dict:
    """balancerCollectionStatus: whether the collection is as the balancer would leave it."""
    name = next(iter(cmd))
    cmap, _ = _sharded(router, cmd[name], name)
    docs = router.refresh_shards()
    draining = {d["_id"] for d in docs if d.get("draining")}
    targets = [d["_id"] for d in docs if not d.get("draining")]
    found = violation(cmap, targets, draining, layout(cmap, router.catalog.zone_ranges(cmap.ns)[0], docs))
    return {"balancerCompliant": found is None, **({"firstComplianceViolation": found} if found else {})}


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
                self.router.refresh_shards()   # every router learns of added and removed shards
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
                    ranges = self.router.catalog.zone_ranges(ns)[0]
                    found = self.router.chunk_map_and_revision(ns, refresh=True)
                    if found is not None and ranges and boundary_points(found[0], ranges):
                        commit_split(self.router, found[0], found[1], boundary_points(found[0], ranges))
                    split_by_size(self.router, ns)
                    cmap = self.router.chunk_map(ns, refresh=True)
                    plan = plan_collection(cmap, targets, draining, layout(cmap, ranges, docs)) \
                        if cmap is not None else None
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
