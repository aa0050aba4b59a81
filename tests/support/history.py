"""A Jepsen-style history of a write workload and its checker.

Each client operation is recorded as `invoke`, then exactly one of `ok` (acknowledged), `fail`
(definitely not applied: the server refused it before running it) or `info` (indeterminate: the
connection broke or the write concern timed out, so it may or may not have applied). The
verdict compares the history with what each member holds afterwards:

- no lost acknowledged write: every `ok` insert is present on every member;
- no phantom write: every present id was invoked, and none that `fail`ed is present.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Event:
    process: int
    type: str          # invoke | ok | fail | info
    value: Any
    time: float = field(default_factory=time.monotonic)
    error: str = ""


class History:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self._lock = threading.Lock()

    def record(self, process: int, kind: str, value: Any, error: str = "") -> None:
        with self._lock:
            self.events.append(Event(process, kind, value, error=error))

    def ids(self, kind: str) -> set:
        return {e.value for e in self.events if e.type == kind}

    def well_formed(self) -> list[str]:
        """Every invoke completes exactly once, by the same process, after it."""
        problems = []
        open_ops: dict[Any, int] = {}
        for e in self.events:
            if e.type == "invoke":
                if e.value in open_ops:
                    problems.append(f"{e.value!r} invoked twice")
                open_ops[e.value] = e.process
            else:
                if open_ops.pop(e.value, None) != e.process:
                    problems.append(f"{e.value!r} completed ({e.type}) without its invoke")
        problems += [f"{v!r} never completed" for v in open_ops]
        return problems


@dataclass
class Verdict:
    acknowledged: int
    indeterminate: int
    failed: int
    lost: dict[str, list]            # member -> acknowledged ids it lacks
    phantoms: dict[str, list]        # member -> ids nobody wrote, or that failed
    malformed: list[str]

    @property
    def valid(self) -> bool:
        return not any(self.lost.values()) and not any(self.phantoms.values()) and not self.malformed

    def __str__(self) -> str:
        if self.valid:
            return (f"valid: no lost acknowledged write, no phantom write ({self.acknowledged} acknowledged, "
                    f"{self.indeterminate} indeterminate, {self.failed} failed)")
        return f"INVALID: lost={self.lost} phantoms={self.phantoms} malformed={self.malformed}"


def check(history: History, members: dict[str, set]) -> Verdict:
    """`members`: each member's name -> the ids it holds."""
    ok, failed, invoked = history.ids("ok"), history.ids("fail"), history.ids("invoke")
    lost = {name: sorted(ok - held, key=str) for name, held in members.items()}
    phantoms = {name: sorted((held - invoked) | (held & failed), key=str) for name, held in members.items()}
    return Verdict(len(ok), len(history.ids("info")), len(failed), lost, phantoms, history.well_formed())
