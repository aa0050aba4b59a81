"""The database profiler: operations recorded in `<db>.system.profile` as mongod records them.

The one recording point is `profiled_dispatch`, which `dispatch` calls instead of running the
command directly only while some database profiles (`PROFILE.active`), so a server that does not
profile pays one attribute test per command. The level and filter are read when the command
starts (as mongod's CurOp does): `profile: 2` itself is not recorded, the `profile: 0` that ends a
session is. Handlers report what they executed into `ctx.profiling` (an `OpRecord`) only while
it is set: the cursor a find, getMore or aggregate read through (its plan stages' counters and
planSummary) and the outcome of a write. Update and delete statements get one entry each, as in
mongod. The collection is capped, 1 MiB, created on first use.
"""
from __future__ import annotations

import datetime
import logging
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

import bson
from bson.int64 import Int64

from ..errors import code_name
from .context import CommandContext
from .current_op import namespace_of
from .profile import PROFILE, DatabaseProfile

log = logging.getLogger("ginkgodb.profiler")

PROFILE_COLLECTION = "system.profile"
PROFILE_SIZE = 1024 * 1024        # mongod's default system.profile size
_MAX_COMMAND_BYTES = 50 * 1024    # larger commands are shown truncated, as mongod does
#: command name -> the profile entry's `op`; every other command is "command"
_OP_TYPES = {"find": "query", "getMore": "getmore", "insert": "insert", "update": "update",
             "delete": "remove"}
#: the statements of a write command: not shown in `command` (update/delete show each statement)
_STATEMENTS = {"insert": "documents", "update": "updates", "delete": "deletes"}


class OpRecord:
    """What a handler executed, for the profile entry of its command."""

    __slots__ = ("cursor", "n_returned", "exhausted", "cursor_id", "outcome", "before")

    def __init__(self) -> None:
        self.cursor: Any = None           # the engine cursor read (its `stats` and `origin`)
        self.n_returned = 0
        self.exhausted = False
        self.cursor_id = 0
        self.outcome: Any = None          # an engine WriteOutcome
        self.before = (0, 0)              # the cursor's keys and documents examined before this op

    def read(self, cursor: Any, n_returned: int, cursor_id: int) -> None:
        self.cursor, self.n_returned, self.cursor_id = cursor, n_returned, cursor_id
        self.exhausted = cursor_id == 0


def note_resumed(ctx: CommandContext, cursor: Any) -> None:
    """A getMore is about to read: what the cursor examined so far is not this op's."""
    record = ctx.profiling
    if record is not None and cursor.stats is not None:
        record.before = (cursor.stats.keys_examined, cursor.stats.docs_examined)


def note_cursor(ctx: CommandContext, cursor: Any, n_returned: int, cursor_id: int) -> None:
    """A find/aggregate/getMore batch (handlers call it only while `ctx.profiling` is set)."""
    record = ctx.profiling
    if record is not None:
        record.read(cursor, n_returned, cursor_id)


def note_writes(ctx: CommandContext, outcome: Any) -> None:
    record = ctx.profiling
    if record is not None:
        record.outcome = outcome


def profiled_dispatch(ctx: CommandContext, cmd: Mapping[str, Any],
                      run: Callable[[CommandContext, Mapping[str, Any]], dict]) -> dict:
    """Run the command with `run` (dispatch's own), then record it if its database profiles it."""
    db = cmd.get("$db", "admin")
    settings = PROFILE.of(ctx.engine, db) if ctx.engine is not None and isinstance(db, str) else None
    if settings is None or settings.level <= 0:
        return run(ctx, cmd)
    sampled = settings.filter is not None or PROFILE.sample_rate >= 1.0 or random.random() < PROFILE.sample_rate
    record, previous = OpRecord(), ctx.profiling
    ctx.profiling = record
    started = time.monotonic()
    try:
        reply = run(ctx, cmd)
    finally:
        ctx.profiling = previous
    millis = int((time.monotonic() - started) * 1000)
    if settings.level == 1 and settings.filter is None and (not sampled or millis < PROFILE.slowms):
        return reply
    try:
        _record(ctx, db, settings, cmd, reply, record, millis)
    except Exception:  # the profiler never fails the operation it describes
        log.exception("cannot write the profile entry of %s", next(iter(cmd), ""))
    return reply


def _record(ctx: CommandContext, db: str, settings: DatabaseProfile, cmd: Mapping[str, Any], reply: dict,
            record: OpRecord, millis: int) -> None:
    entries = profile_entries(ctx, cmd, reply, record, millis)
    if settings.level == 1 and settings.matcher is not None:
        entries = [e for e in entries if settings.matcher(e)]
    if entries:
        write_entries(ctx.engine, db, entries)


def write_entries(engine: Any, db: str, entries: list[dict]) -> None:
    """Insert into `<db>.system.profile`, creating it capped (1 MiB) on first use."""
    if engine.collection_entry(db, PROFILE_COLLECTION) is None:
        from ..errors import CommandError, ErrorCode
        try:
            engine.create_collection(db, PROFILE_COLLECTION, {"capped": True, "size": PROFILE_SIZE})
        except CommandError as exc:
            if exc.code != ErrorCode.NamespaceExists:  # another operation created it first: fine
                raise
    engine.insert(db, PROFILE_COLLECTION, entries, internal=True)


def profile_entries(ctx: CommandContext, cmd: Mapping[str, Any], reply: dict, record: OpRecord,
                    millis: int) -> list[dict]:
    """The profile documents of one command in mongod 7.0's shape (one per update/delete
    statement)."""
    name = next(iter(cmd), "")
    common = _tail(ctx, reply, millis)
    outcome = record.outcome
    if name in ("update", "delete") and outcome is not None and outcome.statements:
        return [_statement_entry(name, cmd, st, outcome, common) for st in outcome.statements]
    entry: dict[str, Any] = {"op": _OP_TYPES.get(name, "command"), "ns": namespace_of(cmd),
                             "command": _command(cmd, name)}
    cursor = record.cursor
    if cursor is not None:
        origin = getattr(cursor, "origin", None)
        if name == "getMore" and origin is not None:
            entry["originatingCommand"] = _command(origin, next(iter(origin), ""))
        if record.cursor_id:
            entry["cursorid"] = Int64(record.cursor_id)
        stats = cursor.stats
        if stats is not None:
            entry["keysExamined"] = stats.keys_examined - record.before[0]
            entry["docsExamined"] = stats.docs_examined - record.before[1]
        if record.exhausted:
            entry["cursorExhausted"] = True
    entry["numYield"] = 0
    if cursor is not None:
        entry["nreturned"] = record.n_returned
    if name == "insert" and outcome is not None:
        entry["ninserted"] = outcome.n
    entry.update(_locks())
    entry["responseLength"] = common.pop("responseLength")
    entry["protocol"] = "op_msg"
    entry["millis"] = millis
    summary = cursor.stats.plan_summary if cursor is not None and cursor.stats is not None else None
    if summary is not None:
        entry["planSummary"] = summary
    entry.update(common)
    return [entry]


def _statement_entry(name: str, cmd: Mapping[str, Any], st: Any, outcome: Any, common: dict) -> dict:
    statements = cmd.get(_STATEMENTS[name]) or []
    statement = statements[st.index] if st.index < len(statements) else {}
    entry: dict[str, Any] = {"op": _OP_TYPES[name], "ns": namespace_of(cmd),
                             "command": _statement(statement),
                             "keysExamined": st.keys_examined, "docsExamined": st.docs_examined}
    if name == "update":
        entry["nMatched"] = 0 if st.upserted else st.n
        entry["nModified"] = st.modified
        if st.upserted:
            entry["upsert"] = True
            entry["nUpserted"] = 1
    else:
        entry["ndeleted"] = st.n
    entry["numYield"] = 0
    entry.update(_locks())
    entry["responseLength"] = common["responseLength"]
    entry["protocol"] = "op_msg"
    entry["millis"] = common["millis"]
    if st.plan_summary is not None:
        entry["planSummary"] = st.plan_summary
    entry.update({k: v for k, v in common.items() if k not in ("responseLength", "millis")})
    return entry


def _tail(ctx: CommandContext, reply: dict, millis: int) -> dict:
    """responseLength, the outcome, ts, client, appName and users: what every entry ends with."""
    out: dict[str, Any] = {"responseLength": _size(reply), "millis": millis}
    if reply.get("ok") != 1.0:
        out["ok"] = 0.0
        out["errMsg"] = reply.get("errmsg", "")
        code = reply.get("code")
        if code is not None:
            out["errName"] = reply.get("codeName") or code_name(code)
            out["errCode"] = code
    out["ts"] = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    out["client"] = _client(ctx)
    app = (ctx.client_metadata or {}).get("application") if isinstance(ctx.client_metadata, Mapping) else None
    if isinstance(app, Mapping) and isinstance(app.get("name"), str):
        out["appName"] = app["name"]
    out["allUsers"] = []
    out["user"] = ""
    return out


def _locks() -> dict:
    return {"locks": {}, "flowControl": {}, "storage": {}}


def _client(ctx: CommandContext) -> str:
    address = ctx.client_address
    if not address:
        return "embedded"
    host, sep, port = address.rpartition(":")
    return host.strip("[]") if sep and port.isdigit() else address


def _size(reply: Mapping[str, Any]) -> int:
    try:
        return len(bson.encode(reply))
    except Exception:  # not encodable as it stands (the server reports that separately)
        return 0


def _command(cmd: Mapping[str, Any], name: str) -> Any:
    """The command as the profile shows it: without a write's statement list, truncated when huge."""
    shown = {k: v for k, v in cmd.items() if k != _STATEMENTS.get(name)}
    try:
        size = len(bson.encode(shown))
    except Exception:
        return {"$truncated": name}
    if size <= _MAX_COMMAND_BYTES:
        return shown
    from bson import json_util
    out: dict[str, Any] = {"$truncated": json_util.dumps({k: shown[k] for k in list(shown)[:8]})[:_MAX_COMMAND_BYTES]}
    if "comment" in shown:
        out["comment"] = shown["comment"]
    return out


def _statement(statement: Any) -> Any:
    """An update/delete statement as its entry's `command` (mongod shows q, u, multi, upsert)."""
    from .fields import plain
    statement = plain(statement)
    if isinstance(statement, Mapping):
        out = dict(statement)
        if "u" in out:
            out.setdefault("multi", False)
            out.setdefault("upsert", False)
        return out
    return statement
