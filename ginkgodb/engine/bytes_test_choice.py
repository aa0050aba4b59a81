"""Which of a filter's tests on stored bytes a scan keeps (query/match/raw_prefilter.py).

A filter's bytes test is a conjunction of group tests, and what each saves depends on the data:
a test that rejects few documents costs its search on every document and saves few decodes.
A scan runs every test on its first CALIBRATION documents (answering with their conjunction)
and counts what each rejects on its own; then it keeps those whose rejections, in decodes saved,
exceed their cost, the best ratio of cost to rejections first (the classic order of filter
predicates), or none. The choice is the scan's own: another collection, or the same one later,
may choose otherwise. Any subset of the tests is sound: each one alone never rejects a match.
"""
from __future__ import annotations

from typing import Any, Optional

from ..query.match.nodes import all_of

#: documents a scan tests with every group before it chooses
CALIBRATION = 256


class Choice:
    """One scan's calibration: called on a document's bytes as the whole test is, counting each
    group's rejections; `chosen()` then gives the test to keep (or None)."""

    __slots__ = ("_tests", "_costs", "_rejected", "_seen")

    def __init__(self, bytes_test: Any) -> None:
        self._tests = bytes_test.tests
        self._costs = bytes_test.costs
        self._rejected = [0] * len(self._tests)
        self._seen = 0

    def __call__(self, raw: bytes) -> bool:
        self._seen += 1
        rejected = self._rejected
        passes = True
        for i, test in enumerate(self._tests):
            if not test(raw):
                rejected[i] += 1
                passes = False
        return passes

    def chosen(self) -> Optional[Any]:
        seen = self._seen or 1
        kept = []
        for test, cost, rejected in zip(self._tests, self._costs, self._rejected):
            share = rejected / seen          # decodes it saves, per document, alone
            if share > cost:
                kept.append((cost / share, test))
        if not kept:
            return None
        kept.sort(key=lambda pair: pair[0])
        return all_of([test for _, test in kept])


def choice_of(compiled: Any) -> Optional[Choice]:
    """A scan's calibration for a compiled filter's bytes test, or None when it has none."""
    bytes_test = getattr(compiled, "raw_prefilter", None)
    return None if bytes_test is None else Choice(bytes_test)


__all__ = ["CALIBRATION", "Choice", "choice_of"]
