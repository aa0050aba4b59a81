"""Per-field statistics of sampled documents: presence, types, sizes, array lengths, string
forms (24-hex ObjectId strings, UUIDs, MD5/SHA digests) and a bounded set of distinct values."""
from __future__ import annotations

import datetime
import re
import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import bson

HEX24 = re.compile(r"[0-9a-fA-F]{24}\Z")
UUID_TEXT = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}\Z")
DIGEST = re.compile(r"(?:[0-9a-fA-F]{32}|[0-9a-fA-F]{40}|[0-9a-fA-F]{64})\Z")
MAX_DEPTH = 4
MAX_DISTINCT = 2000


def value_size(v: Any) -> int:
    """The BSON bytes of a value (type byte and name excluded), estimated without encoding."""
    if isinstance(v, str):
        return len(v.encode("utf-8", "surrogatepass")) + 5
    if isinstance(v, bool) or v is None:
        return 1 if isinstance(v, bool) else 0
    if isinstance(v, int):
        return 4 if -2**31 <= v < 2**31 else 8
    if isinstance(v, (float, datetime.datetime, bson.Timestamp, bson.Int64)):
        return 8
    if isinstance(v, bson.ObjectId):
        return 12
    if isinstance(v, (bytes, bson.Binary)):
        return len(v) + 5
    if isinstance(v, uuid.UUID):
        return 21
    if isinstance(v, Mapping):
        return 5 + sum(len(k) + 2 + value_size(x) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return 5 + sum(len(str(i)) + 2 + value_size(x) for i, x in enumerate(v))
    return 16


@dataclass
class FieldStats:
    path: str
    present: int = 0
    types: Counter = field(default_factory=Counter)
    total_bytes: int = 0
    max_bytes: int = 0
    strings: int = 0
    hex24: int = 0
    uuids: int = 0
    digests: int = 0
    max_array: int = 0
    total_array: int = 0
    arrays: int = 0
    distinct: set = field(default_factory=set)
    distinct_overflow: bool = False
    minimum: Any = None
    maximum: Any = None

    @property
    def avg_bytes(self) -> float:
        return self.total_bytes / self.present if self.present else 0.0

    def note(self, v: Any) -> None:
        self.present += 1
        self.types[type(v).__name__] += 1
        size = value_size(v)
        self.total_bytes += size
        self.max_bytes = max(self.max_bytes, size)
        if isinstance(v, str):
            self.strings += 1
            n = len(v)
            if n == 24 and HEX24.match(v):
                self.hex24 += 1
            elif n in (32, 36) and UUID_TEXT.match(v):
                self.uuids += 1
            if n in (32, 40, 64) and DIGEST.match(v):
                self.digests += 1
        elif isinstance(v, (bson.Binary, uuid.UUID)) and (isinstance(v, uuid.UUID) or v.subtype in (3, 4)):
            self.uuids += 1
        if isinstance(v, list):
            self.arrays += 1
            self.total_array += len(v)
            self.max_array = max(self.max_array, len(v))
        if isinstance(v, (int, float, datetime.datetime, str)) and not isinstance(v, bool):
            try:
                if self.minimum is None or v < self.minimum:
                    self.minimum = v
                if self.maximum is None or v > self.maximum:
                    self.maximum = v
            except TypeError:
                pass
        if not self.distinct_overflow and not isinstance(v, (Mapping, list)):
            try:
                self.distinct.add((type(v).__name__, v))
            except TypeError:
                pass
            if len(self.distinct) > MAX_DISTINCT:
                self.distinct_overflow = True


def field_stats(docs: list[Mapping]) -> dict[str, FieldStats]:
    """Statistics per dotted path (arrays of documents contribute their elements' fields)."""
    stats: dict[str, FieldStats] = {}

    def walk(doc: Mapping, prefix: str, depth: int) -> None:
        for k, v in doc.items():
            path = prefix + k
            s = stats.get(path)
            if s is None:
                s = stats[path] = FieldStats(path)
            s.note(v)
            if depth < MAX_DEPTH:
                if isinstance(v, Mapping):
                    walk(v, path + ".", depth + 1)
                elif isinstance(v, list):
                    for item in v[:50]:
                        if isinstance(item, Mapping):
                            walk(item, path + ".", depth + 1)

    for d in docs:
        walk(d, "", 0)
    return stats
