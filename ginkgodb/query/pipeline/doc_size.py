"""How much memory a decoded document holds, for the blocking stages' limits.

mongod counts its own in-memory documents; the closest cheap measure here is the document's
BSON size. Encoding every document would cost a blocking stage about a microsecond per
document, so every eighth one is measured and the others are taken at the running mean.
"""
from __future__ import annotations

from typing import Any

import bson

from ginkgodb.query.expr.memory import approximate_size

_SAMPLE_EVERY = 8


class DocSizer:
    __slots__ = ("n", "measured", "total")

    def __init__(self) -> None:
        self.n = 0
        self.measured = 0
        self.total = 0

    def __call__(self, doc: Any) -> int:
        n = self.n
        self.n = n + 1
        if n % _SAMPLE_EVERY and self.measured:
            return self.total // self.measured
        try:
            size = len(bson.encode(doc)) if isinstance(doc, dict) else approximate_size(doc)
        except Exception:  # a value BSON cannot hold (it fails later, when returned): estimate
            size = approximate_size(doc)
        self.measured += 1
        self.total += size
        return size
