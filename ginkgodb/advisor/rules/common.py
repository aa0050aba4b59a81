"""Helpers the rules share: sizes in words, the capacity estimate in seed 001's style."""
from __future__ import annotations

import datetime
from typing import Any, Optional

from .. import thresholds as T


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1024 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PB"


def id_entry_bytes(cf: Any) -> float:
    """Bytes per document of the _id index (measured when the server reports it)."""
    size = cf.index_sizes.get("_id_")
    if size and cf.count:
        return size / cf.count
    return T.ID_INDEX_ENTRY


def growth_per_day(cf: Any) -> Optional[float]:
    """Documents a day, from the span of the sample's first date field (None: no dates)."""
    for fs in cf.fields.values():
        if "." in fs.path:
            continue
        if isinstance(fs.minimum, datetime.datetime) and isinstance(fs.maximum, datetime.datetime) \
                and fs.present >= 0.9 * len(cf.sample):
            days = (fs.maximum - fs.minimum).total_seconds() / 86400
            if days > 0:
                return cf.count / days
    return None


def capacity(docs: float, avg: float, index_entry: float, per_day: Optional[float]) -> dict:
    """Documents, index and data bytes now and at the horizon (seed 001's table)."""
    now = {"documents": int(docs), "indexBytes": int(docs * index_entry), "dataBytes": int(docs * avg),
           "avgDocumentBytes": int(avg)}
    out = {"today": now}
    if per_day:
        later = docs + per_day * T.HORIZON_DAYS
        out[f"in{T.HORIZON_DAYS}Days"] = {"documents": int(later), "indexBytes": int(later * index_entry),
                                          "dataBytes": int(later * avg), "avgDocumentBytes": int(avg)}
    return out
