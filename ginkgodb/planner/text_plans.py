"""Planning `$text`: where the text predicate stands in the filter, mongod's checks around it,
and the TEXT plan over the collection's text index (docs/design/text-index.md).

A filter holds at most one `$text`, never under `$nor` (mongod's CanonicalQuery::isValid).
It is either a conjunct of the top level (beside it, or in nested `$and`s), planned as
TEXT_MATCH over a fetch of the index lookups with the other conjuncts as the fetch's filter, or
a branch of a top-level `$or` whose other branches each have an index scan, planned as the
union of the text lookup and those scans. Anywhere deeper (under `$and`s and `$or`s at any
depth), it is planned as mongod's planner allows it: every `$or` on the way down to the `$text`
needs an index scan for each of its other branches (the text lookup and those scans give every
document that can match; the whole filter, with `$text` as "found by the lookup", is applied to
each). A compound text index needs an equality on each of its prefix fields beside the `$text`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import CommandError, ErrorCode
from ..query.text import TextQuery, parse_text_operator, parse_text_query
from .btree_plans import narrows
from .implication import filter_implies
from .parsed_query import ParsedQuery
from .plain import plain_value

_LOGICAL = ("$and", "$or", "$nor")
NO_TEXT_INDEX = "text index required for $text query"
NO_PREFIX = ("failed to use text index to satisfy $text query (if text index is compound, are equality "
             "predicates given for all prefix fields?)")
UNINDEXED_OR = ("Failed to produce a solution for TEXT under OR - other non-TEXT clauses under OR have to "
                "be indexed as well.")
NO_SOLUTIONS = "No query solutions"   # mongod's message when the $text is not a branch of the root $or


@dataclass
class TextPlan:
    index: Any                        # the text access method
    query: TextQuery
    prefix: tuple = ()                # the equality values of the index's prefix fields
    residual: Optional[dict] = None   # what the fetched documents must still match (None: nothing)
    or_scans: list = field(default_factory=list)  # IndexPlans of the other $or branches
    or_filters: list = field(default_factory=list)  # ... and each branch's filter
    compiled: Any = None              # the residual, compiled (positional updates use it)
    nested: Optional[dict] = None     # a $text deeper in the filter: the whole filter to apply


def _count(filt: Any, under_nor: bool = False) -> tuple[int, bool]:
    """(how many $text the filter's logical tree holds, whether one is under a $nor)."""
    if not isinstance(filt, dict):
        return 0, False
    n, nor = 0, False
    for key, value in filt.items():
        if key == "$text":
            n += 1
            nor = nor or under_nor
        elif key in _LOGICAL and isinstance(value, list):
            for branch in value:
                m, b = _count(branch, under_nor or key == "$nor")
                n, nor = n + m, nor or b
    return n, nor


def has_text(filt: Any) -> bool:
    """Whether the filter uses `$text` (after mongod's checks: at most one, none under $nor)."""
    n, under_nor = _count(filt)
    if n > 1:
        raise CommandError(ErrorCode.BadValue, "Too many text expressions")
    if n and under_nor:
        raise CommandError(ErrorCode.BadValue, "text expression not allowed in nor")
    return n == 1


def _split_conjunct(filt: dict) -> Optional[tuple[Any, dict]]:
    """($text operand, the filter without it) when $text is a conjunct of `filt`, else None."""
    if "$text" in filt:
        return filt["$text"], {k: v for k, v in filt.items() if k != "$text"}
    branches = filt.get("$and")
    if isinstance(branches, list):
        for i, branch in enumerate(branches):
            if isinstance(branch, dict):
                found = _split_conjunct(branch)
                if found is not None:
                    operand, rest = found
                    kept = branches[:i] + ([rest] if rest else []) + branches[i + 1:]
                    out = {k: v for k, v in filt.items() if k != "$and"}
                    if kept:
                        out["$and"] = kept
                    return operand, out
    return None


def _equalities(filt: dict, out: dict) -> None:
    """Top-level equality predicates on plain values (for a compound index's prefix)."""
    for key, value in filt.items():
        if key == "$and" and isinstance(value, list):
            for branch in value:
                if isinstance(branch, dict):
                    _equalities(branch, out)
        elif not key.startswith("$"):
            if isinstance(value, dict) and list(value) == ["$eq"]:
                value = value["$eq"]
            if value is None or plain_value(value):
                out.setdefault(key, value)


def _text_index(indexes: list, query: ParsedQuery) -> Any:
    for ix in indexes:
        if getattr(ix, "kind", None) != "text":
            continue
        meta = ix.meta
        if meta.options.get("hidden") or (meta.partial is not None and not filter_implies(query, meta.partial)):
            continue
        return ix
    raise CommandError(ErrorCode.IndexNotFound, NO_TEXT_INDEX)


def plan_text(indexes: list, filt: dict, hint: Any = None, sort: Optional[dict] = None,
              compile_filter: Any = None) -> TextPlan:
    """The TEXT plan for a filter that `has_text`, with mongod's errors. `compile_filter`, when
    given, compiles the other predicates first (their parse errors come before planning's)."""
    if hint not in (None, "", {}):
        raise CommandError(ErrorCode.BadValue, "text and hint not allowed in same query")
    if sort and "$natural" in sort:
        raise CommandError(ErrorCode.BadValue, "text and {$natural: ...} sort order not allowed in same query")
    found = _split_conjunct(filt)
    branches: list = []
    nested: Optional[dict] = None
    beside: dict = {}
    if found is not None:
        operand, residual = found
    elif _is_or_branch(filt):
        operand, residual, branches = _split_or(filt)
    else:
        operand, beside, branches = _nested(filt)
        residual, nested = {}, filt
    params = parse_text_operator(operand)
    if compile_filter is not None:
        for part in [residual, *branches]:
            if part:
                compile_filter(part)
    text_ix = _text_index(indexes, ParsedQuery(filt))
    query = parse_text_query(params, text_ix.spec.default_language)
    prefix_fields = [f for f, _ in text_ix.spec.prefix]
    prefix: tuple = ()
    if prefix_fields:
        equal: dict = {}
        _equalities(beside if nested is not None else residual, equal)
        if (branches and nested is None) or any(f not in equal for f in prefix_fields):
            raise CommandError(ErrorCode.NoQueryExecutionPlans, NO_PREFIX)
        prefix = tuple(equal[f] for f in prefix_fields)
    plan = TextPlan(text_ix, query, prefix, residual or None, nested=nested)
    plan.compiled = compile_filter(residual) if (compile_filter is not None and residual) else None
    unindexed = UNINDEXED_OR if _text_under_root_or(filt) else NO_SOLUTIONS
    for branch in branches:
        plan.or_scans.append(_branch_scan(indexes, branch, unindexed))
        plan.or_filters.append(branch)
    return plan


def _is_or_branch(filt: dict) -> bool:
    """Whether the $text is a whole branch of the top-level $or."""
    branches = filt.get("$or")
    return isinstance(branches, list) and any(
        isinstance(b, dict) and list(b) == ["$text"] for b in branches)


def _text_under_root_or(filt: dict) -> bool:
    """mongod names the unindexed $or branches only when the $or is the whole (canonical)
    filter and the $text one of its branches; otherwise its planner says "No query solutions"."""
    while list(filt) == ["$and"] and isinstance(filt["$and"], list) and len(filt["$and"]) == 1 \
            and isinstance(filt["$and"][0], dict):
        filt = filt["$and"][0]
    return list(filt) == ["$or"] and _is_or_branch(filt)


def contains_text(node: Any) -> bool:
    """Whether `$text` appears in this filter node (through $and/$or/$nor)."""
    return _count(node)[0] > 0


def _nested(filt: dict) -> tuple[Any, dict, list]:
    """A $text under $and/$or at any depth: (its operand, the conjuncts beside it up to the
    nearest $or above it, the other branches of every $or on the way down)."""
    others: list = []
    beside: list = []
    node = filt
    while "$text" not in node:
        rest = {k: v for k, v in node.items() if k not in ("$and", "$or")}
        descended = False
        for key in ("$and", "$or"):
            branches = node.get(key)
            if not isinstance(branches, list):
                continue
            for i, branch in enumerate(branches):
                if isinstance(branch, dict) and contains_text(branch):
                    siblings = branches[:i] + branches[i + 1:]
                    if key == "$or":
                        others.extend(siblings)
                        beside = []   # what stands beside the $or does not stand beside the $text
                    else:
                        beside.extend([rest] if rest else [])
                        beside.extend(siblings)
                        if "$or" in node:
                            beside.append({"$or": node["$or"]})
                    node = branch
                    descended = True
                    break
            if descended:
                break
        if not descended:   # has_text found it: only $and/$or lead there
            raise CommandError(ErrorCode.BadValue, "$text is not allowed in this context")
    beside.append({k: v for k, v in node.items() if k != "$text"})
    return node["$text"], {"$and": [b for b in beside if b]}, others


def _split_or(filt: dict) -> tuple[Any, dict, list]:
    """($text operand, the other top-level conjuncts, the other $or branches) for a $text that
    is a branch of the top-level $or (`_is_or_branch`)."""
    branches = filt["$or"]
    i = next(i for i, b in enumerate(branches) if isinstance(b, dict) and list(b) == ["$text"])
    rest = {k: v for k, v in filt.items() if k != "$or"}
    return branches[i]["$text"], rest, branches[:i] + branches[i + 1:]


def _branch_scan(indexes: list, branch: Any, unindexed: str = UNINDEXED_OR) -> Any:
    query = ParsedQuery(branch if isinstance(branch, dict) else {})
    best = None
    for ix in indexes:
        if getattr(ix, "kind", None) == "text" or not ix.usable(query):
            continue
        p = ix.plan(query, [])
        if p is not None and narrows(p) and (best is None or p.score > best.score):
            best = p
    if best is None:
        raise CommandError(ErrorCode.NoQueryExecutionPlans, unindexed)
    return best
