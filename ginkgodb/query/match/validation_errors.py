"""errInfo.details of a document validation failure for a query-operator validator, in mongod
5.0+'s shape: one clause's `{operatorName, specifiedAs, reason, consideredValue}`, or
`{operatorName: "$and", clausesNotSatisfied: [{index, details}]}` when the validator has several
clauses (fields, operators on one field, `$jsonSchema`). Validators this does not describe
(`$or`, `$nor`, `$expr`, nested logic) get None and keep the generic details."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from ginkgodb.bsonutil.types import TYPE_NAMES

from .element import type_code
from .values import as_document, is_object

_COMPARISONS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
_DESCRIBED = frozenset(_COMPARISONS + ("$in", "$nin", "$exists", "$type"))
_MISSING = object()


def validator_details(spec: Mapping, doc: Mapping) -> Optional[dict]:
    clauses = _clauses(spec)
    if clauses is None:
        return None
    from . import compile_filter
    failing = []
    for index, (clause, implicit) in enumerate(clauses):
        if not compile_filter(clause, where=False)(doc):
            failing.append((index, clause, implicit))
    if len(clauses) == 1:
        return _clause_details(clauses[0][0], clauses[0][1], doc) if failing else None
    return {"operatorName": "$and",
            "clausesNotSatisfied": [{"index": i, "details": _clause_details(c, implicit, doc)}
                                    for i, c, implicit in failing]}


def _clauses(spec: Mapping) -> Optional[list[tuple[dict, bool]]]:
    """(a one-predicate filter, whether it was an implicit equality), per clause."""
    out: list[tuple[dict, bool]] = []
    for key, cond in spec.items():
        if key == "$jsonSchema":
            out.append(({key: cond}, False))
        elif key == "$and" and isinstance(cond, list) and all(isinstance(c, dict) for c in cond):
            for sub in cond:
                more = _clauses(sub)
                if more is None:
                    return None
                out.extend(more)
        elif key.startswith("$"):
            return None
        elif is_object(cond) and cond and all(str(k).startswith("$") for k in as_document(cond)):
            ops = as_document(cond)
            if not all(op in _DESCRIBED for op in ops):
                return None
            out.extend(({key: {op: v}}, False) for op, v in ops.items())
        else:
            out.append(({key: {"$eq": cond}}, True))
    return out


def _clause_details(clause: dict, implicit: bool, doc: Mapping) -> dict:
    if "$jsonSchema" in clause:
        from .schema_errors import schema_details
        return schema_details(clause["$jsonSchema"], doc)
    field, cond = next(iter(clause.items()))
    op, arg = next(iter(cond.items()))
    out: dict[str, Any] = {"operatorName": op, "specifiedAs": {field: arg} if implicit else {field: {op: arg}}}
    value = _value_at(doc, field)
    if op == "$exists":
        out["reason"] = "path does not exist" if arg else "path does exist"
        if value is not _MISSING:
            out["consideredValue"] = value
        return out
    if value is _MISSING:
        out["reason"] = "field was missing"
        return out
    if op == "$type":
        out.update(reason="type did not match", consideredValue=value,
                   consideredType=TYPE_NAMES.get(type_code(value), "unknown"))
    elif op == "$in":
        out.update(reason="no matching value found in array", consideredValue=value)
    elif op == "$nin":
        out.update(reason="matching value found in array", consideredValue=value)
    else:
        out.update(reason="comparison failed", consideredValue=value)
    return out


def _value_at(doc: Mapping, path: str) -> Any:
    current: Any = doc
    for part in path.split("."):
        if is_object(current) and part in as_document(current):
            current = as_document(current)[part]
        else:
            return _MISSING
    return current
