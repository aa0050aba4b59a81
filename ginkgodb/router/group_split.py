"""Splitting a `$group` into a shard-side partial group and a router-side merge. Pure.

Only accumulators whose partial results merge exactly are split: `$sum`, `$min`, `$max`,
`$count`, and `$avg` (as a sum and a count of the numeric values, divided after the merge). A
group with any other accumulator (order-dependent `$first`/`$last`, `$push`, `$addToSet`...)
is not split: the router runs it whole over the shards' documents.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

_PREFIX = "__ginkgo_"


def split_group(spec: Any) -> Optional[tuple[dict, list[dict]]]:
    """(the shards' $group, the router's stages) for a `$group` spec, or None if not splittable."""
    if not isinstance(spec, Mapping) or "_id" not in spec:
        return None
    partial: dict[str, Any] = {"_id": spec["_id"]}
    merge: dict[str, Any] = {"_id": "$_id"}
    finish: dict[str, Any] = {}
    internal: list[str] = []
    for name, acc in spec.items():
        if name == "_id":
            continue
        if not isinstance(acc, Mapping) or len(acc) != 1 or name.startswith(_PREFIX):
            return None
        op, expr = next(iter(acc.items()))
        if op in ("$sum", "$min", "$max"):
            partial[name] = {op: expr}
            merge[name] = {op: "$" + name}
        elif op == "$count":
            if expr != {}:
                return None
            partial[name] = {"$sum": 1}
            merge[name] = {"$sum": "$" + name}
        elif op == "$avg":
            total, count = f"{_PREFIX}{name}_sum", f"{_PREFIX}{name}_n"
            partial[total] = {"$sum": expr}
            partial[count] = {"$sum": {"$cond": [{"$isNumber": expr}, 1, 0]}}
            merge[name] = {"$first": {"$literal": None}}   # keeps the field's place in the output
            merge[total] = {"$sum": "$" + total}
            merge[count] = {"$sum": "$" + count}
            finish[name] = {"$cond": [{"$eq": ["$" + count, 0]}, None, {"$divide": ["$" + total, "$" + count]}]}
            internal += [total, count]
        else:
            return None
    stages: list[dict] = [{"$group": merge}]
    if finish:
        stages += [{"$set": finish}, {"$unset": internal}]
    return partial, stages
