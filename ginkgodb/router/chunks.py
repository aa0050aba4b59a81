"""A sharded collection's chunk map: ranges of the shard key, their owners and versions.

Pure data (no I/O). The map is immutable: split and move return a new map, which the catalog
commits to etcd with a compare-and-swap (docs/design/sharding.md). Versions are (major, minor)
under the collection's epoch: a split raises the minor, a migration the major.
"""
from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Optional

from bson.objectid import ObjectId
from bson.timestamp import Timestamp

from ..bsonutil.shell_format import format_document
from ..errors import CommandError, ErrorCode
from .shardkey import ShardKey


@dataclass(frozen=True)
class Chunk:
    min: dict
    max: dict
    shard: str
    major: int
    minor: int
    jumbo: bool = False

    @property
    def version(self) -> tuple[int, int]:
        return (self.major, self.minor)


class ChunkMap:
    """Chunks sorted by their minimum, covering the whole key space without gaps."""

    def __init__(self, ns: str, key: ShardKey, epoch: ObjectId, timestamp: Timestamp,
                 chunks: Iterable[Chunk]) -> None:
        self.ns = ns
        self.key = key
        self.epoch = epoch
        self.timestamp = timestamp
        self.chunks = sorted(chunks, key=lambda c: key.bound(c.min))
        self._mins = [key.bound(c.min) for c in self.chunks]
        self._maxs = [key.bound(c.max) for c in self.chunks]
        for i in range(1, len(self.chunks)):
            if self._mins[i] != self._maxs[i - 1]:
                raise ValueError(f"chunk map of {ns} has a gap or an overlap at {self.chunks[i].min}")

    # -- versions ---------------------------------------------------------------------------------
    @property
    def version(self) -> tuple[int, int]:
        return max(c.version for c in self.chunks)

    def shard_version(self, shard: str) -> tuple[int, int]:
        """The highest version of the shard's chunks; (0, 0) when it owns none."""
        versions = self.__dict__.get("_shard_versions")
        if versions is None:   # worked out once per map (it is immutable): every versioned request asks
            versions = {}
            for c in self.chunks:
                if c.version > versions.get(c.shard, (0, 0)):
                    versions[c.shard] = c.version
            self.__dict__["_shard_versions"] = versions
        return versions.get(shard, (0, 0))

    def shards(self) -> list[str]:
        return sorted({c.shard for c in self.chunks})

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.chunks:
            out[c.shard] = out.get(c.shard, 0) + 1
        return out

    # -- lookups ----------------------------------------------------------------------------------
    def index_of(self, key: bytes) -> int:
        return max(0, bisect.bisect_right(self._mins, key) - 1)

    def chunk_for(self, key: bytes) -> Chunk:
        return self.chunks[self.index_of(key)]

    def overlapping(self, low: bytes, high: bytes) -> list[Chunk]:
        """Chunks holding any key k with low <= k <= high."""
        first, last = self.index_of(low), self.index_of(high)
        return self.chunks[first:last + 1]

    def find_chunk(self, bound: dict) -> Optional[Chunk]:
        """The chunk whose minimum is exactly `bound` (moveChunk's `bounds`), else None."""
        key = self.key.bound(bound)
        i = bisect.bisect_left(self._mins, key)
        return self.chunks[i] if i < len(self._mins) and self._mins[i] == key else None

    def bounds_bytes(self, chunk: Chunk) -> tuple[bytes, bytes]:
        return self.key.bound(chunk.min), self.key.bound(chunk.max)

    # -- changes (new maps) ---------------------------------------------------------------------
    def split(self, points: list[dict]) -> ChunkMap:
        """Split at each point (a bound document in key space); each point must fall strictly
        inside a chunk. The new chunks take the collection's major and fresh minors."""
        major, minor = self.version
        chunks = list(self.chunks)
        for point in points:
            key = self.key.bound(point)
            i = bisect.bisect_right([self.key.bound(c.min) for c in chunks], key) - 1
            chunk = chunks[i]
            if key == self.key.bound(chunk.min) or key >= self.key.bound(chunk.max):
                raise CommandError(ErrorCode.InvalidOptions,
                                   f"cannot split chunk [{chunk.min}, {chunk.max}) at key {point}")
            minor += 1
            left = replace(chunk, max=point, major=major, minor=minor)
            minor += 1
            right = replace(chunk, min=point, major=major, minor=minor)
            chunks[i:i + 1] = [left, right]
        return ChunkMap(self.ns, self.key, self.epoch, self.timestamp, chunks)

    def run(self, low: dict, high: dict) -> Optional[list[Chunk]]:
        """The chunks that exactly tile [low, high) (their first minimum is `low` and last
        maximum `high`), else None."""
        lo, hi = self.key.bound(low), self.key.bound(high)
        i = bisect.bisect_left(self._mins, lo)
        if i >= len(self._mins) or self._mins[i] != lo:
            return None
        j = bisect.bisect_left(self._maxs, hi)
        if j >= len(self._maxs) or self._maxs[j] != hi or j < i:
            return None
        return self.chunks[i:j + 1]

    def merge(self, low: dict, high: dict) -> ChunkMap:
        """One chunk for [low, high), which must be tiled by chunks of one shard; it takes the
        collection's major and the next minor (7.0's commitChunksMerge). A range that is one
        chunk already is returned unchanged (mongod's merge is idempotent)."""
        run = self.run(low, high)
        shard = run[0].shard if run else ""
        if not run or any(c.shard != shard for c in run):
            owner = self.chunk_for(self.key.bound(low)).shard if run is None else shard
            raise CommandError(ErrorCode.IllegalOperation,
                               f"could not merge chunks, shard {owner} does not contain a sequence of chunks "
                               f"that exactly fills the range {range_text(low, high)}")
        if len(run) == 1:
            return self
        major, minor = self.version
        merged = Chunk(run[0].min, run[-1].max, shard, major, minor + 1, any(c.jumbo for c in run))
        first = self.chunks.index(run[0])
        chunks = self.chunks[:first] + [merged] + self.chunks[first + len(run):]
        return ChunkMap(self.ns, self.key, self.epoch, self.timestamp, chunks)

    def with_jumbo(self, chunk: Chunk) -> ChunkMap:
        """The same map with `chunk` marked jumbo (it holds one key value above the chunk size)."""
        return ChunkMap(self.ns, self.key, self.epoch, self.timestamp,
                        [replace(c, jumbo=True) if c == chunk else c for c in self.chunks])

    def move(self, chunk: Chunk, to_shard: str) -> ChunkMap:
        """`chunk` owned by `to_shard` at major+1; the donor's highest chunk (if it keeps any)
        is raised to the same major so both shards' versions change (the donor's old version
        is then stale)."""
        major = self.version[0] + 1
        donor = chunk.shard
        out = []
        for c in self.chunks:
            if c == chunk:
                out.append(replace(c, shard=to_shard, major=major, minor=0))
            else:
                out.append(c)
        remaining = [c for c in out if c.shard == donor]
        if remaining:
            top = max(remaining, key=lambda c: c.version)
            out[out.index(top)] = replace(top, major=major, minor=1)
        return ChunkMap(self.ns, self.key, self.epoch, self.timestamp, out)

    # -- storage form -----------------------------------------------------------------------------
    def to_doc(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "timestamp": self.timestamp, "key": self.key.pattern,
                "chunks": [{"min": c.min, "max": c.max, "shard": c.shard, "lastmod": [c.major, c.minor],
                            "jumbo": c.jumbo} for c in self.chunks]}

    @classmethod
    def from_doc(cls, ns: str, key: ShardKey, doc: dict) -> ChunkMap:
        """The stored map; its own `key` (written since reshardCollection, which changes the key
        and the bounds in one commit) wins over the collection entry's."""
        if doc.get("key"):
            key = ShardKey(doc["key"])
        chunks = [Chunk(c["min"], c["max"], c["shard"], int(c["lastmod"][0]), int(c["lastmod"][1]),
                        bool(c.get("jumbo"))) for c in doc["chunks"]]
        return cls(ns, key, doc["epoch"], doc["timestamp"], chunks)


def range_text(low: Mapping, high: Mapping) -> str:
    """A key range as mongod's ChunkRange::toString prints it: `[{ a: 1 }, { a: 10 })`."""
    return f"[{format_document(low)}, {format_document(high)})"


def initial_chunks(key: ShardKey, shards: list[str], primary: str, num_initial: int = 0) -> list[Chunk]:
    """The chunks shardCollection creates: one on the primary shard for a range key; for a
    hashed key, `num_initial` (default 2 per shard) ranges of the int64 hash space spread
    round-robin over the shards (7.0's presplitting)."""
    from bson.int64 import Int64
    if not key.is_hashed or key.hashed != 0:
        return [Chunk(key.global_min(), key.global_max(), primary, 1, 0)]
    n = num_initial or 2 * len(shards)
    n = max(1, n)
    span = 1 << 64
    cuts = [-(1 << 63) + span * i // n for i in range(1, n)]
    rest = key.fields[1:]
    bounds = [key.global_min()] + [{key.fields[0]: Int64(c), **{f: _min_key() for f in rest}} for c in cuts] \
        + [key.global_max()]
    return [Chunk(bounds[i], bounds[i + 1], shards[i % len(shards)], 1, i) for i in range(n)]


def _min_key() -> Any:
    from bson.min_key import MinKey
    return MinKey()
