"""The rules: each a small function from facts to findings, registered under its stable id.

Collection rules take a `CollectionFacts`; database rules a `DatabaseFacts`; shard-key rules
the `ShardKeyFacts` of one `--shard-key` candidate. docs/advisor.md documents each one: its
source in the seeds or MongoDB's guidance, and its thresholds (thresholds.py).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..findings import Finding


@dataclass(frozen=True)
class Rule:
    id: str
    scope: str                    # "collection", "database" or "shard-key"
    check: Callable[[Any], list[Finding]]


RULES: dict[str, Rule] = {}


def rule(rule_id: str, scope: str = "collection") -> Callable:
    def deco(fn: Callable[[Any], list[Finding]]) -> Callable[[Any], list[Finding]]:
        if rule_id in RULES:
            raise ValueError(f"rule {rule_id} registered twice")
        RULES[rule_id] = Rule(rule_id, scope, fn)
        return fn
    return deco


def run(scope: str, facts: Any) -> list[Finding]:
    out: list[Finding] = []
    for r in RULES.values():
        if r.scope == scope:
            out.extend(r.check(facts))
    return out


from . import collections, documents, identifiers, indexes, patterns, queries, shard_keys  # noqa: E402,F401
