"""What the advisor reports: findings (rule, severity, evidence, recommendation, estimate) per
namespace, and the facts the charts draw."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

SEVERITIES = ("high", "medium", "low", "info")


@dataclass
class Finding:
    rule: str                     # a stable rule id (docs/advisor.md)
    severity: str                 # one of SEVERITIES
    namespace: str                # "db.coll", or "db" for database-wide rules
    summary: str                  # one line: what was found
    recommendation: str           # one or two sentences: what to do
    evidence: dict = field(default_factory=dict)
    estimate: Optional[dict] = None   # capacity today and after the redesign, where it applies

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Report:
    generated: str
    target: str
    sample_size: int
    findings: list[Finding] = field(default_factory=list)
    collections: list[dict] = field(default_factory=list)   # per collection: sizes, histogram, indexes
    query_shapes: list[dict] = field(default_factory=list)  # the costliest shapes
    shard_keys: list[dict] = field(default_factory=list)    # analyzeShardKey + the distribution estimate
    notes: list[str] = field(default_factory=list)          # what could not be read, and why
    seconds: float = 0.0

    def ordered(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: (SEVERITIES.index(f.severity), f.namespace, f.rule))

    def to_dict(self) -> dict[str, Any]:
        return {"version": 1, "generated": self.generated, "target": self.target,
                "sampleSize": self.sample_size, "seconds": round(self.seconds, 3),
                "findings": [f.to_dict() for f in self.ordered()],
                "collections": self.collections, "queryShapes": self.query_shapes,
                "shardKeys": self.shard_keys, "notes": self.notes}
