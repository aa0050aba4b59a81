"""Index accesses for `$indexStats`: how many operations each index served, since when.

The planner's one exit (`plan_builder.build`) notes the indexes of every plan it builds for an
operation that runs (not for explain), as mongod counts an access per operation that uses the
index. Counting is one dict update per operation, so it stays on. The counters survive restarts:
the engine writes them into its META key space when it closes (`flush`) and reads them back on
open; a crash loses the accesses since the last clean shutdown (documented in docs/advisor.md).
Counters are not locked: two threads noting the same index at once may lose one access, which
an advisory statistic tolerates better than a lock on every read.
"""
from __future__ import annotations

import datetime
import struct
from collections import defaultdict
from typing import Any, Optional

from . import layout

#: layout.META_INDEX_USAGE + index id (4) -> ops (u64), since (ms since the epoch, u64)
META_INDEX_USAGE = layout.META_INDEX_USAGE
_VALUE = struct.Struct(">QQ")
_ID = struct.Struct(">I")


def _now_ms() -> int:
    return int(datetime.datetime.now(datetime.UTC).timestamp() * 1000)


class IndexUsage:
    """Accesses per index id, with the time counting began (the index's creation, the first
    start of the data directory, or the first start after the index was created)."""

    __slots__ = ("ops", "since", "_started")

    def __init__(self) -> None:
        self.ops: defaultdict[int, int] = defaultdict(int)
        self.since: dict[int, int] = {}
        self._started = _now_ms()

    def note(self, index_ids: tuple[int, ...]) -> None:
        ops = self.ops
        for i in index_ids:
            ops[i] += 1

    def accesses(self, index_id: int) -> dict:
        """`{ops, since}` as `$indexStats` shows it."""
        from bson.int64 import Int64
        since = self.since.get(index_id, self._started)
        return {"ops": Int64(self.ops.get(index_id, 0)),
                "since": datetime.datetime.fromtimestamp(since / 1000, datetime.UTC).replace(tzinfo=None)}

    def load(self, txn: Any) -> None:
        from ..storage.kv import prefix_end
        for key, value in txn.scan(META_INDEX_USAGE, prefix_end(META_INDEX_USAGE)):
            (index_id,) = _ID.unpack_from(key, len(META_INDEX_USAGE))
            ops, since = _VALUE.unpack(value)
            self.ops[index_id] = self.ops.get(index_id, 0) + ops
            self.since[index_id] = since

    def flush(self, txn: Any, live_ids: Optional[set[int]] = None) -> None:
        """Write every counter (dropping those of indexes that no longer exist)."""
        from ..storage.kv import prefix_end
        stale = [k for k, _ in txn.scan(META_INDEX_USAGE, prefix_end(META_INDEX_USAGE))]
        for key in stale:
            txn.delete(key)
        ids = set(self.ops) if live_ids is None else live_ids
        for index_id in ids:
            since = self.since.setdefault(index_id, self._started)
            txn.put(META_INDEX_USAGE + _ID.pack(index_id), _VALUE.pack(self.ops.get(index_id, 0), since))
