"""One measured cell (workload x target x n x repeat) and the closed set of outcomes it can have.

Every cell ends in exactly one status, so nothing is ever silently skipped: a target that cannot
run says why ("unavailable"), a missing operation says which exception ("unsupported"), and a fast
wrong answer is flagged ("WRONG") rather than reported as a rate alone.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

OK = "ok"
WRONG = "WRONG"
UNSUPPORTED = "unsupported"
ERROR = "error"
TIMEOUT = "timeout"
NOT_APPLICABLE = "n/a"
UNAVAILABLE = "unavailable"
SKIPPED = "skipped"

#: statuses whose `rate` is meaningful
MEASURED = (OK, WRONG)


@dataclass
class Result:
    """A rate (higher is better, in `unit`) or the reason there is none."""

    target: str
    workload: str
    n: int
    status: str
    rate: float | None = None
    unit: str = ""
    ops: int = 0
    seconds: float = 0.0
    detail: str = ""
    repeat: int = 0
    phase: str = "main"  # "main" (every workload at --n) or "scaling" (W4/W5/W8 at several n)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        return cls(**data)
