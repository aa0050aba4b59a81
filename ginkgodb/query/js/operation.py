"""The JavaScript side of one operation: its settings, its sandbox, its deadline and killOp.

`commands.dispatch` binds an `Operation` for the command it runs (`bind`); the JavaScript
operators reach it with `current()`. One sandbox per operation, created on first use, so nothing
a script leaves behind (globals, prototypes) outlives the command that ran it: a cursor's later
batch (getMore) is a new operation with a fresh sandbox, as each mongod operation gets its own
scope. killOp and the deadline are checked before every call into the sandbox; a call itself is
bounded by the smaller of the deadline and `fn_timeout_ms` (internalQueryJavaScriptFnTimeoutMillis).
"""
from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ginkgodb.errors import CommandError, ErrorCode

from ..operation import OPERATION, check_interrupt
from ..operation import current as current_operation
from .sandbox import Sandbox, ScriptError


@dataclass(frozen=True)
class ScriptSettings:
    """What the server (or embedded client) allows: mongod's security.javascriptEnabled and the
    internalQueryJavaScriptFnTimeoutMillis / internalQueryJavaScriptHeapSizeLimitMB parameters."""

    enabled: bool = True
    fn_timeout_ms: int = 60_000
    heap_limit_mb: int = 100


#: errors of a disabled engine, by feature (mongod's words)
_DISABLED = {
    "where": (ErrorCode.WhereNoScriptEngine, "no globalScriptEngine in $where parsing"),
    "js": (ErrorCode.JavaScriptDisabled,
           "Cannot run server-side javascript without the javascript engine enabled"),
}


class Operation:
    """One command's JavaScript state. Its deadline and killOp are the running operation's
    (query/operation.py), read at each call, so a cursor's getMore is bounded by its own."""

    def __init__(self, settings: ScriptSettings | Callable[[], ScriptSettings]) -> None:
        self._settings = settings
        self._sandbox: Sandbox | None = None
        self._deadline_bound = False  # the last call's time limit was the command's deadline

    @property
    def settings(self) -> ScriptSettings:
        """Worked out on first use: most operations never run JavaScript."""
        settings = self._settings
        if not isinstance(settings, ScriptSettings):
            settings = self._settings = settings()
        return settings

    def require(self, feature: str) -> None:
        """Refuse `feature` ("where" or "js") when scripting is disabled."""
        if not self.settings.enabled:
            raise CommandError(*_DISABLED[feature])

    def sandbox(self, feature: str) -> Sandbox:
        self.require(feature)
        box = self._sandbox
        if box is None or box.broken:
            box = self._sandbox = Sandbox(self.settings.heap_limit_mb * 1024 * 1024)
        return box

    def limit(self) -> float:
        """Seconds the next call may run: the function time-out, cut to the deadline."""
        self.check()
        limit = self.settings.fn_timeout_ms / 1000.0
        deadline = getattr(current_operation(), "deadline", None)
        self._deadline_bound = False
        if deadline is not None and deadline - time.monotonic() < limit:
            limit, self._deadline_bound = max(deadline - time.monotonic(), 0.001), True
        return limit

    def check(self) -> None:
        check_interrupt()

    def failure(self, exc: BaseException, wrap: str) -> CommandError:
        """The mongod error for a failed call: `wrap` (code, prefix) for script exceptions."""
        if isinstance(exc, TimeoutError):
            self.check()  # the deadline or killOp, when that is what stopped it
            if self._deadline_bound:  # the interpreter's clock may stop a hair before ours
                raise CommandError(ErrorCode.MaxTimeMSExpired, "operation exceeded time limit")
            return CommandError(ErrorCode.JSInterpreterFailure,
                                f"JavaScript execution exceeded {self.settings.fn_timeout_ms} ms "
                                "(internalQueryJavaScriptFnTimeoutMillis)")
        if isinstance(exc, MemoryError):
            return CommandError(ErrorCode.JSInterpreterFailure, "Out of memory")
        if isinstance(exc, ScriptError):
            code, prefix = _WRAPS[wrap]
            return CommandError(code, prefix + exc.text)
        raise exc


_WRAPS = {
    "where": (ErrorCode.WhereInvocationError, "error on invocation of $where function:\n"),
    "call": (ErrorCode.JsFunctionFailed, "js function failed to execute: "),
    "no_return": (ErrorCode.JsFunctionFailedNoReturn, "js function failed to execute: "),
}

_CURRENT: contextvars.ContextVar[Operation | operating | None] = contextvars.ContextVar(
    "ginkgodb_js_operation", default=None)
_DEFAULT = ScriptSettings()


def current() -> Operation:
    """The bound operation, or (outside any command, e.g. a library caller) a fresh default one."""
    op = _CURRENT.get()
    if op is None:
        op = Operation(_DEFAULT)
        _CURRENT.set(op)
    elif op.__class__ is operating:
        return op.script()
    return op  # type: ignore[return-value]


class operating:  # lower case: used as a function, `with operating(op, settings):`
    """Make `op` the current operation (as query.operation.running) and give it its own
    JavaScript operation: `running` and `bind` in one block, which every command enters. The
    JavaScript operation is made, and `settings(op)` called, only when a script asks for it
    (`current()`): most commands run none."""

    __slots__ = ("_op", "_settings", "_js", "_tokens")

    def __init__(self, op: object, settings: Callable[[Any], ScriptSettings]) -> None:
        self._op = op
        self._settings = settings
        self._js: Operation | None = None

    def script(self) -> Operation:
        """This command's JavaScript operation, made on first use."""
        js = self._js
        if js is None:
            op, settings = self._op, self._settings
            js = self._js = Operation(lambda: settings(op))
        return js

    def __enter__(self) -> None:
        self._tokens = OPERATION.set(self._op), _CURRENT.set(self)

    def __exit__(self, *exc: object) -> None:
        op_token, js_token = self._tokens
        _CURRENT.reset(js_token)
        OPERATION.reset(op_token)


class bind:  # lower case: used as a function, `with bind(settings) as op:`
    """Run a command with its own JavaScript operation (a class, not a generator: every command
    enters it)."""

    __slots__ = ("_op", "_token")

    def __init__(self, settings: ScriptSettings | Callable[[], ScriptSettings]) -> None:
        self._op = Operation(settings)

    def __enter__(self) -> Operation:
        self._token = _CURRENT.set(self._op)
        return self._op

    def __exit__(self, *exc: object) -> None:
        _CURRENT.reset(self._token)
