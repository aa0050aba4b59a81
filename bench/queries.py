"""The queries whose answers need the whole data set, each beside its plain-Python twin.

The twin is both the correctness oracle (expected answers come from one streaming pass over the
generator, never from a peer) and, for the scan predicate, the F2 floor.
"""
from __future__ import annotations

from dataclasses import dataclass

from .documents import CATEGORIES, CITIES, Dataset

SCAN_CATEGORIES = CATEGORIES[:3]
SCAN_CITIES = CITIES[:10]

#: W7: a full scan on unindexed fields with $and / $or / $in / $elemMatch.
SCAN_FILTER = {
    "$and": [
        {"$or": [{"category": {"$in": list(SCAN_CATEGORIES)}}, {"qty": {"$gte": 95}}]},
        {"items": {"$elemMatch": {"qty": {"$gte": 9}, "price": {"$lt": 50.0}}}},
        {"address.city": {"$in": list(SCAN_CITIES)}},
    ]
}

_SCAN_CATEGORY_SET = frozenset(SCAN_CATEGORIES)
_SCAN_CITY_SET = frozenset(SCAN_CITIES)


def scan_predicate(d: dict) -> bool:
    """SCAN_FILTER as a Python function (valid for this data set's shapes only)."""
    return (
        (d["category"] in _SCAN_CATEGORY_SET or d["qty"] >= 95)
        and any(it["qty"] >= 9 and it["price"] < 50.0 for it in d["items"])
        and d["address"]["city"] in _SCAN_CITY_SET
    )


#: W10: $match + $group ($sum, $avg) + $sort; ties broken by _id so the order is total.
GROUP_PIPELINE = [
    {"$match": {"status": "active"}},
    {"$group": {"_id": "$category", "total": {"$sum": "$qty"}, "avg_price": {"$avg": "$price"},
                "n": {"$sum": 1}}},
    {"$sort": {"total": -1, "_id": 1}},
]


@dataclass(frozen=True)
class Expectations:
    """Answers computed from the generator for the untouched data set."""

    scan_count: int
    scan_seq_sum: int
    groups: tuple[tuple[str, int, float, int], ...]  # (category, total, avg_price, n), pipeline order


def compute_expectations(ds: Dataset) -> Expectations:
    """One streaming pass over the data set (not timed; a few seconds at n = 100,000)."""
    scan_count = scan_seq_sum = 0
    sums: dict[str, list] = {}
    for d in ds.docs():
        if scan_predicate(d):
            scan_count += 1
            scan_seq_sum += d["seq"]
        if d["status"] == "active":
            acc = sums.setdefault(d["category"], [0, 0.0, 0])
            acc[0] += d["qty"]
            acc[1] += d["price"]
            acc[2] += 1
    groups = sorted(((c, t, p / m, m) for c, (t, p, m) in sums.items()), key=lambda g: (-g[1], g[0]))
    return Expectations(scan_count, scan_seq_sum, tuple(groups))
