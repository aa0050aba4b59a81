"""profile: the database profiler's settings, as mongod keeps them.

`slowms` and `sampleRate` are process-wide (they also drive the server's slow-query log;
`ginkgodb serve --slowms` seeds them). The level (0 off, 1 slow or filtered operations, 2 all)
and the `filter` are per database, as in mongod, and live in memory with the engine that
serves the database (a restart turns profiling off, as mongod's without --profile). What gets
recorded, and how, is `profiler.py`.
"""
from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, command, on_database, value
from .fields import is_number

FILTER_NOTE = ("When a filter expression is set, slowms and sampleRate are not used for profiling and "
               "slow-query log lines.")


@dataclass(frozen=True)
class DatabaseProfile:
    """One database's profiler settings: its level and its filter (with the compiled matcher)."""

    level: int = 0
    filter: Optional[dict] = None
    matcher: Optional[Callable[[Any], bool]] = None


class _NoEngine:
    """Stands for the engine of contexts that have none (commands answered without storage)."""


_NO_ENGINE = _NoEngine()


@dataclass
class ProfileSettings:
    level: int = 0            # the level databases start at (mongod's --profile)
    slowms: int = 100
    sample_rate: float = 1.0
    #: True while some database of some engine profiles (dispatch's one check when it is off)
    active: bool = False
    _databases: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary)

    def of(self, engine: Any, db: str) -> DatabaseProfile:
        per_db = self._databases.get(engine if engine is not None else _NO_ENGINE)
        settings = per_db.get(db) if per_db is not None else None
        return settings if settings is not None else DatabaseProfile(self.level)

    def set(self, engine: Any, db: str, settings: DatabaseProfile) -> None:
        key = engine if engine is not None else _NO_ENGINE
        self._databases.setdefault(key, {})[db] = settings
        self.active = self.level > 0 or any(
            s.level > 0 for per_db in list(self._databases.values()) for s in per_db.values())


PROFILE = ProfileSettings()
_LOCK = threading.Lock()


def _parse_filter(spec: Any) -> Any:
    """The `filter` field: a match expression over profile documents, or "unset" (False)."""
    if spec == "unset":
        return False
    if not isinstance(spec, Mapping):
        raise CommandError(ErrorCode.TypeMismatch,
                           "BSON field 'profile.filter' is the wrong type, expected types '[object, string]'")
    from .fields import plain
    return dict(plain(spec))


@command("profile", help="controls the behaviour of the performance profiler, the fraction of eligible "
                         "operations which are sampled for logging/profiling, and the threshold "
                         "duration at which ops become eligible. See "
                         "http://docs.mongodb.org/manual/reference/command/profile",
         fields=(value("slowms"), value("sampleRate"), value("filter")),
         privileges=(on_database("enableProfiler"),))
def profile(ctx: CommandContext, args: Args) -> dict:
    cmd = args.cmd
    level = cmd["profile"]
    if not is_number(level) or int(level) != level or int(level) not in (-1, 0, 1, 2):
        raise CommandError(ErrorCode.BadValue, "Invalid profiling level")
    level = int(level)
    slowms, rate = cmd.get("slowms"), cmd.get("sampleRate")
    if slowms is not None and not is_number(slowms):
        raise CommandError(ErrorCode.TypeMismatch, "'slowms' must be a number")
    if rate is not None and (not is_number(rate) or not 0 <= float(rate) <= 1):
        raise CommandError(ErrorCode.BadValue, "'sampleRate' must be between 0.0 and 1.0 inclusive")
    new_filter = _parse_filter(cmd["filter"]) if cmd.get("filter") is not None else None
    matcher = None
    if new_filter:
        from ..query.match import compile_filter
        matcher = compile_filter(new_filter)  # a bad filter fails before anything changes
    with _LOCK:
        old = PROFILE.of(ctx.engine, args.db)
        reply: dict = {"was": old.level, "slowms": PROFILE.slowms, "sampleRate": PROFILE.sample_rate}
        if old.filter is not None:
            reply["filter"] = old.filter
        if old.filter is not None or new_filter:
            reply["note"] = FILTER_NOTE
        if level != -1 or new_filter is not None:
            settings = DatabaseProfile(level if level != -1 else old.level, old.filter, old.matcher)
            if new_filter is False:
                settings = DatabaseProfile(settings.level)
            elif new_filter:
                settings = DatabaseProfile(settings.level, new_filter, matcher)
            PROFILE.set(ctx.engine, args.db, settings)
        if slowms is not None:
            PROFILE.slowms = int(slowms)
        if rate is not None:
            PROFILE.sample_rate = float(rate)
    return reply
