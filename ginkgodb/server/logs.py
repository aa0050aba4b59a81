"""Structured logs: one JSON object per line, in mongod's shape (t, s, c, id, ctx, msg, attr).

Only rare events are logged (connections, slow operations, start and stop); nothing is written
per command, so logging never sits on the fast path. The last lines are kept for getLog.
"""
from __future__ import annotations

import collections
import datetime
import json
import logging
import sys
import threading
from collections.abc import Mapping
from typing import Any, Optional, TextIO

from bson import json_util

LOGGER_NAME = "ginkgodb"
_SEVERITY = {logging.DEBUG: "D1", logging.INFO: "I", logging.WARNING: "W", logging.ERROR: "E",
             logging.CRITICAL: "F"}
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR}
_MAX_ATTR_CHARS = 10_000  # mongod truncates large attributes similarly
_JSON_OPTIONS = json_util.JSONOptions(json_mode=json_util.JSONMode.RELAXED)

log = logging.getLogger(LOGGER_NAME)


def event(level: int, component: str, log_id: int, ctx: str, msg: str, **attr: Any) -> None:
    """Log one mongod-style line (only formatted if the level is enabled)."""
    if log.isEnabledFor(level):
        log.log(level, msg, extra={"mongo": (component, log_id, ctx, attr)})


class MongoJsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        component, log_id, ctx, attr = getattr(record, "mongo", ("-", 0, record.name, {}))
        when = datetime.datetime.fromtimestamp(record.created, datetime.UTC)
        line: dict[str, Any] = {
            "t": {"$date": when.isoformat(timespec="milliseconds")},
            "s": _SEVERITY.get(record.levelno, "I"), "c": component, "id": log_id, "ctx": ctx,
            "msg": record.getMessage(),
        }
        if attr:
            line["attr"] = attr
        if record.exc_info:
            line.setdefault("attr", {})["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=_json_default, separators=(",", ":"))


def _json_default(value: Any) -> Any:
    return json.loads(json_util.dumps(value, json_options=_JSON_OPTIONS))


class RecentLines(logging.Handler):
    """Keeps the last `capacity` formatted lines for `getLog: "global"`."""

    def __init__(self, capacity: int = 1024) -> None:
        super().__init__()
        self.lines: collections.deque[str] = collections.deque(maxlen=capacity)
        self.total = 0
        self._guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        text = self.format(record)
        with self._guard:
            self.lines.append(text)
            self.total += 1


def configure(level: str = "info", stream: Optional[TextIO] = None) -> RecentLines:
    """Send ginkgodb's logs to `stream` (stdout) as JSON lines; returns the getLog buffer."""
    formatter = MongoJsonFormatter()
    log.handlers.clear()
    out = logging.StreamHandler(stream or sys.stdout)
    out.setFormatter(formatter)
    recent = RecentLines()
    recent.setFormatter(formatter)
    log.addHandler(out)
    log.addHandler(recent)
    log.setLevel(_LEVELS.get(level, logging.INFO))
    log.propagate = False
    return recent


def summarize(command: Mapping[str, Any]) -> dict[str, Any]:
    """A loggable copy of a command: long arrays cut to their first items, huge values elided."""
    out: dict[str, Any] = {}
    for key, value in command.items():
        if isinstance(value, list) and len(value) > 3:
            value = [*value[:3], f"... {len(value) - 3} more"]
        out[key] = value
    try:
        text = json_util.dumps(out, json_options=_JSON_OPTIONS)
    except Exception:  # an undecodable RawBSONDocument: log its shape only
        return {"command": next(iter(command), "")}
    if len(text) > _MAX_ATTR_CHARS:
        return {next(iter(command), ""): "...", "truncated": f"{len(text)} characters"}
    return json.loads(text)
