"""The deterministic data set every workload and floor runs on.

Document `i` is a pure function of `(seed, i)`, so a worker can regenerate any document (or any
derived expectation) on demand instead of keeping the data set in memory: memory measured in a
target's process must be the engine's, not the benchmark's.

Shape (about 0.5 KB of BSON): an ObjectId, ints, a double, a datetime, strings, a nested
subdocument and an array of five small subdocuments. Two fields carry the indexed keys:
`k` (int; `rank // 10`, so equality matches 10 documents) and `sku` (unique string). `rank` is a
scrambled permutation of `0..n-1` so index order does not follow insertion order.
"""
from __future__ import annotations

import datetime as dt
import math
import random
import struct
from collections.abc import Iterator

from bson import ObjectId

CATEGORIES = tuple(f"cat-{c:02d}" for c in range(16))
CITIES = tuple(f"city-{c:02d}" for c in range(30))
STATUSES = ("active", "active", "active", "inactive", "archived")
WORDS = ("alpha", "bravo", "cedar", "delta", "ember", "fjord", "gamma", "heron", "indigo", "jade",
         "kelp", "lumen", "maple", "nectar", "onyx", "pine", "quartz", "raven", "sable", "tundra")
EPOCH = dt.datetime(2024, 1, 1)
K_PER_VALUE = 10  # documents sharing one value of `k`


class Dataset:
    """`n` documents generated from `seed`; random access by position `i`."""

    def __init__(self, n: int, seed: int = 42) -> None:
        if n <= 0:
            raise ValueError("n must be positive")
        self.n = n
        self.seed = seed
        self._stride = _coprime_stride(n, seed)
        self._offset = (seed * 7_919) % n
        self._inverse = pow(self._stride, -1, n) if n > 1 else 0

    # -- keys ------------------------------------------------------------------------------------
    def rank(self, i: int) -> int:
        """Position of document `i` in `k`/`sku` order (a bijection on 0..n-1)."""
        return (i * self._stride + self._offset) % self.n

    def position_of_rank(self, rank: int) -> int:
        return ((rank - self._offset) * self._inverse) % self.n

    def object_id(self, i: int) -> ObjectId:
        return ObjectId(struct.pack(">IHIH", 0x65920080, self.seed & 0xFFFF, i >> 16, i & 0xFFFF))

    @staticmethod
    def sku_of_rank(rank: int) -> str:
        return f"SKU-{rank:09d}"

    def sku(self, i: int) -> str:
        return self.sku_of_rank(self.rank(i))

    def k(self, i: int) -> int:
        return self.rank(i) // K_PER_VALUE

    @property
    def k_values(self) -> int:
        """Number of distinct `k` values."""
        return math.ceil(self.n / K_PER_VALUE)

    def count_k_below(self, k_limit: int) -> int:
        """How many documents have `k < k_limit` (exact, without scanning)."""
        return max(0, min(self.n, k_limit * K_PER_VALUE))

    def count_k_between(self, lo: int, hi: int) -> int:
        """How many documents have `lo <= k < hi`."""
        return self.count_k_below(hi) - self.count_k_below(lo)

    # -- documents -------------------------------------------------------------------------------
    def doc(self, i: int) -> dict:
        """Document `i`; documents past `n` (extra inserts) get keys by wrapping their rank."""
        r = random.Random(self.seed * 1_000_003 + i).random
        rank = self.rank(i % self.n)
        w = WORDS
        return {
            "_id": self.object_id(i),
            "seq": i,
            "k": rank // K_PER_VALUE,
            "sku": self.sku_of_rank(rank),
            "name": f"{w[int(r() * 20)]} {w[int(r() * 20)]} {i}",
            "category": CATEGORIES[int(r() * 16)],
            "status": STATUSES[int(r() * 5)],
            "qty": int(r() * 100),
            "price": round(1.0 + r() * 499.0, 2),
            "available": int(r() * 4),
            # BSON datetimes have millisecond precision: generate exactly representable values.
            "created": EPOCH + dt.timedelta(milliseconds=int(r() * 31_536_000_000)),
            "address": {
                "street": f"{1 + int(r() * 998)} {w[int(r() * 20)].title()} St",
                "city": CITIES[int(r() * 30)],
                "zip": f"{int(r() * 100_000):05d}",
                "geo": {"lat": round(r() * 180 - 90, 6), "lon": round(r() * 360 - 180, 6)},
            },
            "items": [
                {"code": f"I{int(r() * 100_000):05d}", "qty": 1 + int(r() * 10),
                 "price": round(0.5 + r() * 99.5, 2)}
                for _ in range(5)
            ],
            "note": f"{w[int(r() * 20)]} {w[int(r() * 20)]} {w[int(r() * 20)]} {w[int(r() * 20)]}",
            "hits": 0,
            "log": [],
        }

    def docs(self, start: int = 0, stop: int | None = None) -> Iterator[dict]:
        for i in range(start, self.n if stop is None else stop):
            yield self.doc(i)

    def batches(self, size: int, start: int = 0, stop: int | None = None) -> Iterator[list[dict]]:
        """Documents in lists of `size`, generated lazily so 1M documents never sit in memory."""
        stop = self.n if stop is None else stop
        for lo in range(start, stop, size):
            yield [self.doc(i) for i in range(lo, min(lo + size, stop))]


def _coprime_stride(n: int, seed: int) -> int:
    stride = 2_654_435_761 + seed  # Knuth's multiplicative-hash constant, nudged to be coprime
    while math.gcd(stride, n) != 1:
        stride += 1
    return stride % n or 1
