"""One JavaScript sandbox: a QuickJS (quickjs-ng) context with no host access.

The context has only the language's own globals plus the prelude (BSON types, emit, the
marshalling helpers): no module loader, no filesystem, network, process or timers, and no Python
callable is ever registered in it. Each call runs under a time limit (the smaller of the
function time-out and the operation's deadline) and the context under a memory limit; a context
that ran out of memory or was interrupted is discarded, never reused.
"""
from __future__ import annotations

import importlib.resources
import math
import re
from typing import Any

import quickjs

from ginkgodb.errors import CommandError, ErrorCode

_PRELUDE = importlib.resources.files(__package__).joinpath("prelude.js").read_text(encoding="utf-8")
_STACK_BYTES = 1 << 20
_LIMIT_SLACK = 0.02  # seconds a shrinking deadline may pass before the limit is set again
_INTERRUPTED = re.compile(r"^InternalError: interrupted\b")


class ScriptError(Exception):
    """A JavaScript exception, in mongod's shape: "<Name>: <message> :\\n<stack>"."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class Sandbox:
    """A context and its compiled functions (by source). Used by one thread at a time."""

    def __init__(self, memory_limit: int) -> None:
        self.context = quickjs.Context()
        self.context.set_memory_limit(memory_limit)
        self.context.set_max_stack_size(_STACK_BYTES)
        self.context.eval(_PRELUDE)
        get = self.context.get
        self._compile, self._where, self._call = get("__compile"), get("__where"), get("__call")
        self._map, self._scope = get("__map"), get("__scope")
        self._functions: dict[str, int] = {}
        self._limit = -2.0  # the time limit last given to the context (it applies per call)
        self.broken = False

    def compiled(self, source: str) -> int | None:
        """The id of an already compiled `source` (None: not compiled yet)."""
        return self._functions.get(source)

    def function(self, source: str, limit: float) -> int | None:
        """The id of `source` compiled as a function (None: it does not compile)."""
        fid = self._functions.get(source)
        if fid is None:
            try:
                fid = self._invoke(self._compile, limit, source)
            except ScriptError:
                return None
            self._functions[source] = fid
        return fid

    def where(self, fid: int, doc: tuple[str, str], limit: float) -> bool:
        """`doc` as convert.dumps_document gives it."""
        return self._invoke(self._where, limit, fid, doc[0], doc[1]) is True

    def call(self, fid: int, this_json: str | None, args_json: str, limit: float) -> str:
        return self._invoke(self._call, limit, fid, this_json, args_json)

    def map(self, fid: int, docs_json: str, tagged_json: str, limit: float) -> str:
        return self._invoke(self._map, limit, fid, docs_json, tagged_json)

    def set_scope(self, vars_json: str, limit: float) -> None:
        self._invoke(self._scope, limit, vars_json)

    def _invoke(self, fn: Any, limit: float, *args: Any) -> Any:
        if self.broken:
            raise CommandError(ErrorCode.JSInterpreterFailure, "JavaScript sandbox is no longer usable")
        if not math.isfinite(limit):
            limit = -1.0
        if limit != self._limit and not (0 <= limit <= self._limit < limit + _LIMIT_SLACK):
            self.context.set_time_limit(limit)  # each call is timed from its start
            self._limit = limit
        try:
            return fn(*args)
        except quickjs.StackOverflow as exc:
            raise ScriptError(_mongod_text(str(exc))) from None
        except quickjs.JSException as exc:
            text = str(exc)
            if _INTERRUPTED.match(text):
                self.broken = True
                raise TimeoutError from None
            if text.strip() == "null" or text.startswith("InternalError: out of memory"):
                self.broken = True
                raise MemoryError from None
            raise ScriptError(_mongod_text(text)) from None


def _mongod_text(text: str) -> str:
    """QuickJS's "Name: message\\n    at f (<input>:1:2)" as mongod prints script errors."""
    first, _, stack = text.partition("\n")
    frames = []
    for line in stack.splitlines():
        line = line.strip()
        if "(native)" in line or line.startswith("at __"):
            break  # the prelude's own frames: the host's entry points
        if line:
            frames.append(line)
    return f"{first} :\n" + "".join(f + "\n" for f in frames) if frames else first
