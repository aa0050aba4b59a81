"""Does a query imply a partial index's filter? (Only then may the index answer the query.)

Conservative: a False answer costs only an index, a wrong True would lose documents. Each
top-level condition of the partial filter must follow from a condition of the query on the same
path: an identical condition, an equality whose value satisfies it, or a tighter range.
"""
from __future__ import annotations

from typing import Any

from ..bsonutil.compare import compare
from ..bsonutil.sentinels import ABSENT
from ..bsonutil.types import bracket

_RANGE_OPS = ("$gt", "$gte", "$lt", "$lte")


def conjuncts(spec: dict) -> list[tuple[str, Any]]:
    """(path, condition) pairs that all must hold, flattening top-level $and."""
    out: list[tuple[str, Any]] = []
    for key, value in spec.items():
        if key == "$and" and isinstance(value, list):
            for sub in value:
                if isinstance(sub, dict):
                    out.extend(conjuncts(sub))
        elif not key.startswith("$"):
            out.append((key, value))
    return out


def filter_implies(query: Any, partial: dict) -> bool:
    """`query` is a filter document or a ParsedQuery (whose conjuncts are parsed once)."""
    have = getattr(query, "conjuncts", None)
    if have is None:
        have = conjuncts(query) if isinstance(query, dict) else []
    for path, cond in conjuncts(partial):
        if not any(p == path and _implies(c, cond, path) for p, c in have):
            return False
    return not any(k.startswith("$") and k != "$and" for k in partial)


def _is_operator_doc(cond: Any) -> bool:
    return isinstance(cond, dict) and bool(cond) and all(k.startswith("$") for k in cond)


def _implies(have: Any, need: Any, path: str) -> bool:
    if have == need:
        return True
    if not _is_operator_doc(have) or list(have) == ["$eq"]:
        value = have["$eq"] if _is_operator_doc(have) else have
        return _value_satisfies(value, need, path)
    if not _is_operator_doc(need):
        return False
    return all(_op_implied(have, op, arg) for op, arg in need.items())


def _value_satisfies(value: Any, need: Any, path: str) -> bool:
    if isinstance(value, (list, dict)):
        return False  # array/document equality interacts with traversal: stay conservative
    if _is_operator_doc(need) and not set(need) <= _EXISTENTIAL_OPS:
        return False  # negations may fail on another element of an array that matched
    if _is_operator_doc(need) and need.get("$exists", True) is not True and not need.get("$exists"):
        return False
    from ..query.match import compile_filter
    doc: dict = {}
    cur = doc
    parts = path.split(".")
    for part in parts[:-1]:
        cur[part] = {}
        cur = cur[part]
    cur[parts[-1]] = value
    return compile_filter({path: need})(doc)


def _op_implied(have: dict, op: str, arg: Any) -> bool:
    if op == "$exists":
        if not arg:
            return False
        return any(k in have for k in _RANGE_OPS) or ("$eq" in have and have["$eq"] is not None)
    if op not in _RANGE_OPS:
        return have.get(op, ABSENT) == arg
    for hop, harg in have.items():
        if hop not in _RANGE_OPS or bracket(harg) != bracket(arg):
            continue
        c = compare(harg, arg)
        if op in ("$gt", "$gte") and hop in ("$gt", "$gte"):
            if c > 0 or (c == 0 and (op == "$gte" or hop == "$gt")):
                return True
        if op in ("$lt", "$lte") and hop in ("$lt", "$lte"):
            if c < 0 or (c == 0 and (op == "$lte" or hop == "$lt")):
                return True
    return False


_EXISTENTIAL_OPS = {"$eq", "$gt", "$gte", "$lt", "$lte", "$in", "$exists", "$type"}
