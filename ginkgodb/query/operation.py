"""The running operation as the query layer sees it: its deadline and kill flag.

Matchers, expressions and pipelines are compiled once and cached across operations, so they
cannot hold the operation they run for. Instead the caller (`commands.dispatch`) marks its
operation current for the duration of a command (`running(ctx)`, a context variable, so every
worker thread sees its own), and long loops and regular-expression matches ask it whether to stop
(`check_interrupt`) and how long they may still run (`regex_time_budget`).

An operation is anything with `deadline` (monotonic seconds or None), `killed` (bool) and
`check_interrupt()` raising 50 MaxTimeMSExpired / 11601 Interrupted: the commands layer's
CommandContext.
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Any, Optional

from ginkgodb.errors import CommandError, ErrorCode

from .knobs import KNOBS

_current: ContextVar[Optional[Any]] = ContextVar("ginkgodb_operation", default=None)
#: the variable `running` sets (js.operating sets it with the operation's JavaScript state)
OPERATION = _current

#: how many iterations a long loop runs between two interrupt checks
CHECK_EVERY = 256


class running:  # lower case: used as a function, `with running(op):`
    """Make `op` the current operation of this thread (or task) until the block ends (a class,
    not a generator: every command enters it, and this costs a third as much)."""

    __slots__ = ("_op", "_token")

    def __init__(self, op: Any) -> None:
        self._op = op

    def __enter__(self) -> None:
        self._token = _current.set(self._op)

    def __exit__(self, *exc: Any) -> None:
        _current.reset(self._token)


def current() -> Optional[Any]:
    return _current.get()


def check_interrupt() -> None:
    """Raise if the current operation was killed or ran past its deadline (no-op without one)."""
    op = _current.get()
    if op is not None:
        op.check_interrupt()


def checked(items: Iterable[Any], every: int = CHECK_EVERY) -> Iterator[Any]:
    """`items`, checking every `every` items whether the operation running *then* was killed
    or ran out of time (a cursor's later batches run under their getMore's operation).
    Outside any operation (a background thread) the items come through unwrapped."""
    if _current.get() is None:
        return iter(items)
    return _checked(items, every)


def _checked(items: Iterable[Any], every: int) -> Iterator[Any]:
    get = _current.get
    n = 0
    for item in items:
        n += 1
        if n >= every:
            n = 0
            op = get()
            if op is not None:
                op.check_interrupt()
        yield item


def interruptible(items: Any, every: int = CHECK_EVERY) -> Any:
    """A sized collection as is when it is short, else iterated with interrupt checks."""
    if len(items) < every or _current.get() is None:
        return items
    return _checked(items, every)


def regex_time_budget() -> tuple[float, bool]:
    """(seconds one regex match may run, whether the operation's deadline sets that limit).

    The limit is the smaller of the server-wide safety limit (internalQueryRegexMatchTimeoutMS)
    and the time left before the operation's maxTimeMS deadline. Raises when the operation is
    already killed or past its deadline, so every match is also an interrupt check."""
    limit = KNOBS.regex_match_timeout_ms / 1000.0
    op = _current.get()
    if op is None:
        return limit, False
    if op.killed:
        op.check_interrupt()
    deadline = op.deadline
    if deadline is None:
        return limit, False
    left = deadline - time.monotonic()
    if left <= 0:
        raise CommandError(ErrorCode.MaxTimeMSExpired, "operation exceeded time limit")
    if left < limit:
        return left, True
    return limit, False
