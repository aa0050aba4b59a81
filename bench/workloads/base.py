"""What a workload is, the state workloads share inside one worker, and answer checking.

Workloads run in order W1..W15 against one target and build on each other (W1 loads the data W4
reads; W12 deletes what W13 counts). The shared `Context` tracks what the data set should look
like, so every check compares against an expectation derived from the generator, never from a
peer's answer.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..documents import Dataset
from ..queries import Expectations, compute_expectations
from ..targets import Target
from ..timing import Sample

DB_NAME = "bench"
MAIN = "docs"


class Checker:
    """Collects failed answer checks without stopping the measurement (a wrong answer still has
    a rate, but is reported as WRONG)."""

    def __init__(self) -> None:
        self.failures = 0
        self.messages: list[str] = []

    def expect(self, ok: bool, what: str, got: Any = None) -> bool:
        if not ok:
            self.failures += 1
            message = what if got is None else f"{what} (got {_short(got)})"
            if len(self.messages) < 3 and message not in self.messages:
                self.messages.append(message)
        return ok

    def equal(self, actual: Any, expected: Any, what: str) -> bool:
        if actual == expected:
            return True
        return self.expect(False, f"{what}: expected {_short(expected)}, got {_short(actual)}")

    def summary(self) -> str:
        return "; ".join(self.messages) + (f" ({self.failures} failed checks)" if self.failures > 1 else "")


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


@dataclass
class Context:
    """One target's session: its client, the data set and the expected state of the data."""

    target: Target
    ds: Dataset
    budget: float
    seed: int
    data_ready: bool = False
    setup_error: str = ""
    index_attempted: bool = False
    indexed_fields: set[str] = field(default_factory=set)
    index_error: str = ""
    count: int = 0  # documents expected in the main collection
    bson_bytes: int = 0  # encoded size of the loaded documents
    check: Checker = field(default_factory=Checker)
    notes: list[str] = field(default_factory=list)
    _expectations: Expectations | None = None

    @property
    def db(self) -> Any:
        return self.target.client[DB_NAME]

    @property
    def coll(self) -> Any:
        return self.db[MAIN]

    def rng(self, salt: str) -> random.Random:
        return random.Random(f"{self.seed}:{salt}")

    def expectations(self) -> Expectations:
        if self._expectations is None:
            self._expectations = compute_expectations(self.ds)
        return self._expectations


@dataclass(frozen=True)
class Workload:
    id: str
    title: str
    unit: str
    run: Callable[[Context], Sample]
    needs_data: bool = True
    uses_index: tuple[str, ...] = ()  # fields whose index the workload is meant to exercise
    durable_only: bool = False
    #: (encodes, decodes) of data-set documents a minimal engine storing BSON must do per unit of
    #: rate; with the F1 floors this bounds the rate (None: other documents, no bound)
    bson_cost: tuple[float, float] | None = None


REGISTRY: dict[str, Workload] = {}


def workload(wid: str, title: str, unit: str, **options: Any) -> Callable[[Callable], Callable]:
    """Register `fn(ctx) -> Sample` as workload `wid`."""
    def register(fn: Callable[[Context], Sample]) -> Callable[[Context], Sample]:
        REGISTRY[wid] = Workload(wid, title, unit, fn, **options)
        return fn
    return register


def ordered_ids() -> list[str]:
    return sorted(REGISTRY, key=lambda w: int(w[1:]))
