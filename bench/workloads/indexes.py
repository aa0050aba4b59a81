"""W3: index builds over existing data."""
from __future__ import annotations

from ..timing import Sample
from .base import Context, workload
from .loading import build_indexes


@workload("W3", "create_index int + unique string", "keys/s", bson_cost=(0, 0.5))
def create_indexes(ctx: Context) -> Sample:
    return build_indexes(ctx)
