"""The values the planner produces: one index scan, and a whole query plan."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class IndexPlan:
    index: Any                 # catalog IndexMeta
    bounds: Any                # planner.bounds.IndexBounds
    direction: int = 1
    provides_sort: bool = False
    score: tuple = ()


@dataclass
class QueryPlan:
    kind: str                  # "COLLSCAN", "IXSCAN" or "OR"
    scans: list = field(default_factory=list)   # list[IndexPlan]
    provides_sort: bool = False
    direction: int = 1         # COLLSCAN direction ($natural)
    filter: Optional[dict] = None  # the filter the plan must still apply (None: none)
