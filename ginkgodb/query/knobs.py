"""Process-wide limits of query execution, as mongod's query server parameters.

The values are read on every use, so `setParameter` (commands/server_parameters.py owns the
parameter table and writes here) changes them for the next operation. Defaults are mongod 7.0's,
except the regular-expression safety limit, which mongod does not have (it bounds PCRE by its
match limit instead).
"""
from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass
class QueryKnobs:
    #: longest one regular-expression match may run without maxTimeMS (ms): beyond it the
    #: query fails with 51156 instead of holding a worker for as long as backtracking takes
    regex_match_timeout_ms: int = 3000
    #: whether a query that does not say `allowDiskUse` may spill (mongod 6.0+: true)
    allow_disk_use_by_default: bool = True
    #: memory one blocking sort (find's SORT, $sort) may hold before it spills or fails (292)
    max_blocking_sort_bytes: int = 100 * MIB
    #: memory $group may hold for its groups before it spills or fails (292)
    group_max_memory_bytes: int = 100 * MIB
    #: memory an array built by $range may take (146)
    max_range_bytes: int = 100 * MIB
    #: memory of one $push / $addToSet result (146)
    max_push_bytes: int = 100 * MIB
    max_add_to_set_bytes: int = 100 * MIB


KNOBS = QueryKnobs()
