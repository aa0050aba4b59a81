"""The authorization check, made once per command by dispatch from its declared privileges.

Before the handler: an unauthenticated client may run only what needs no authentication
(13 "Command <name> requires authentication"), unless the localhost exception is in force;
then every (action, resource) the command needs must be granted by the user's roles, else 13
"not authorized on <db> to execute command { ... }" (the command as mongod prints it, secrets
replaced by "xxx"). After it: cursors remember who opened them (a getMore or killCursors by
another user is 13) and listDatabases shows only what the user may see.

Without an AuthSession (the embedded client) or without --auth nothing is checked.
"""
from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Optional

from bson.binary import Binary

from ..bsonutil.shell_format import Style, double_nice, format_document
from ..errors import CommandError, ErrorCode
from .auth_state import CLUSTER, AuthSession, Resource, namespace
from .auth_users import ADMIN, ROLES, USERS
from .context import CommandContext
from .declare import COMMANDS, CommandSpec

#: fields whose values never appear in messages (mongod's sensitiveFieldNames)
_SENSITIVE = frozenset({"pwd", "payload"})
#: commands that act on cursors some user opened
_CURSOR_ACTIONS = frozenset({"getMore", "killCursors"})

After = Optional[Callable[[dict], None]]


def _uuid_text(v: Any) -> str:
    if isinstance(v, Binary):
        v = v.as_uuid()
    return f'UUID("{v}")'


def _double(v: float) -> str:
    return double_nice(v) if math.isfinite(v) else ("nan.0" if math.isnan(v) else ("inf.0" if v > 0 else "-inf.0"))


def _string(s: str) -> str:
    return f'"{s}"'


#: BSONObj::toString as mongod prints a command in a message
_COMMAND_STYLE = Style(_double, _string, ((uuid.UUID, _uuid_text),))


def command_text(cmd: Mapping[str, Any]) -> str:
    shown = {k: ("xxx" if k in _SENSITIVE else _uuids(v)) for k, v in cmd.items()}
    return format_document(shown, _COMMAND_STYLE)


def _uuids(v: Any) -> Any:
    if isinstance(v, Binary) and v.subtype == 4:
        return v.as_uuid()
    if isinstance(v, Mapping):
        return {k: _uuids(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_uuids(x) for x in v]
    return v


def session_of(ctx: CommandContext) -> Optional[AuthSession]:
    """The connection's session when authorization is enforced on it."""
    session = getattr(ctx, "auth", None)
    if isinstance(session, AuthSession) and session.security.enabled:
        return session
    return None


def unauthorized(db: str, cmd: Mapping[str, Any]) -> CommandError:
    return CommandError(ErrorCode.Unauthorized, f"not authorized on {db} to execute command {command_text(cmd)}")


def require(ctx: CommandContext, action: str, resource: Resource, cmd: Mapping[str, Any], db: str) -> None:
    """A check a handler makes itself (a role granted by createUser needs grantRole on its db)."""
    session = session_of(ctx)
    if session is None:
        return
    if not session.allows(action, resource):
        raise unauthorized(db, cmd)


def allows(ctx: CommandContext, action: str, resource: Resource) -> bool:
    session = session_of(ctx)
    return session is None or session.allows(action, resource)


def check_authenticated(ctx: CommandContext, spec: CommandSpec, name: str, cmd: Mapping[str, Any]) -> None:
    """13 before anything else when the command needs a user and there is none (with the
    localhost exception in force, the command goes on to be checked against its grants)."""
    session = session_of(ctx)
    if session is None:
        return
    session.bypass = False
    if not spec.requires_auth:
        return
    session.refresh(ctx.engine)
    if session.authenticated:
        return
    if session.localhost_bypass(ctx.engine):
        session.bypass = True
        return
    raise CommandError(ErrorCode.Unauthorized, f"Command {name} requires authentication")


def authorize(ctx: CommandContext, spec: CommandSpec, name: str, cmd: Mapping[str, Any], args: Any) -> After:
    """Refuse (13) what the user may not do; returns what to do with the reply afterwards."""
    session = session_of(ctx)
    if session is None or not spec.requires_auth:
        return None
    db = args.db
    if name == "listDatabases":
        return _list_databases(session, cmd)
    if name == "listCollections" and not session.allows("listCollections", namespace(db)):
        return _list_collections(session, cmd, db)
    if name in ("currentOp", "killOp") and session.authenticated and not session.allows(
            "inprog" if name == "currentOp" else "killop", CLUSTER):
        return _own_ops(ctx, session, name, cmd)
    if name in _CURSOR_ACTIONS:
        _check_cursors(session, name, cmd, args)
    coll = cmd.get("collection") if name == "getMore" else args.coll
    for action, resource in needs(spec, cmd, db, coll if isinstance(coll, str) else None):
        if not session.allows(action, resource):
            raise unauthorized(db, cmd)
    if db == ADMIN and coll in (USERS, ROLES) and spec.write:
        return _auth_documents_changed(session)
    return _owner_recorder(session)


def needs(spec: CommandSpec, cmd: Mapping[str, Any], db: str, coll: Optional[str]) -> list[tuple[str, Resource]]:
    """The (action, resource) pairs a command needs, from its declaration (and, for the few
    whose reach depends on their arguments, from those)."""
    out: list[tuple[str, Resource]] = []
    for privilege in spec.privileges:
        kind = privilege.resource
        if kind == "collection":
            out.extend((a, namespace(db, coll)) for a in privilege.actions)
        elif kind == "database":
            out.extend((a, namespace(db)) for a in privilege.actions)
        elif kind == "cluster":
            if spec.name == "renameCollection":
                out.extend(_rename(cmd))
            else:
                out.extend((a, CLUSTER) for a in privilege.actions)
        elif kind == "inner":
            out.extend(_inner(cmd, db))
    if spec.name in ("aggregate", "mapReduce"):
        out.extend(_pipeline_needs(cmd, db, coll))
    return out


def _inner(cmd: Mapping[str, Any], db: str) -> list[tuple[str, Resource]]:
    inner = cmd.get("explain")
    if not isinstance(inner, Mapping) or not inner:
        return []
    name = next(iter(inner))
    spec = COMMANDS.get(name)
    if spec is None:
        return []
    target = inner.get(name)
    return needs(spec, inner, db, target if isinstance(target, str) else None)


def _split(ns: Any) -> tuple[str, str]:
    text = ns if isinstance(ns, str) else ""
    db, _, coll = text.partition(".")
    return db, coll


def _rename(cmd: Mapping[str, Any]) -> list[tuple[str, Resource]]:
    """mongod's renameCollection: within a database, renameCollectionSameDB on it (and
    dropCollection on the target with dropTarget); across databases, find and dropCollection
    on the source, and insert, createIndex and createCollection on the target."""
    (sdb, scoll), (tdb, tcoll) = _split(cmd.get("renameCollection")), _split(cmd.get("to"))
    source, target = namespace(sdb, scoll), namespace(tdb, tcoll)
    if sdb == tdb:
        out = [("renameCollectionSameDB", namespace(sdb)), ("find", source)]
    else:
        out = [("find", source), ("dropCollection", source), ("insert", target), ("createIndex", target),
               ("createCollection", target)]
    if cmd.get("dropTarget"):
        out.append(("dropCollection", target))
    return out


def _pipeline_needs(cmd: Mapping[str, Any], db: str, coll: Optional[str]) -> list[tuple[str, Resource]]:
    """What an aggregation's stages reach besides its collection: $out/$merge targets, and the
    collections $lookup, $graphLookup and $unionWith read; a change stream needs changeStream;
    mapReduce's out collection."""
    out: list[tuple[str, Resource]] = []
    if "mapReduce" in cmd:
        target = cmd.get("out")
        if isinstance(target, str):
            out += [(a, namespace(db, target)) for a in ("insert", "remove")]
        elif isinstance(target, Mapping) and "inline" not in target:
            name = next((v for k, v in target.items() if k in ("replace", "merge", "reduce")), None)
            tdb = target.get("db", db)
            if isinstance(name, str) and isinstance(tdb, str):
                out += [(a, namespace(tdb, name)) for a in ("insert", "remove", "update")]
        return out
    stages = cmd.get("pipeline")
    _walk(stages if isinstance(stages, list) else [], db, coll, out)
    return out


def _walk(stages: list, db: str, coll: Optional[str], out: list[tuple[str, Resource]]) -> None:
    for stage in stages:
        if not isinstance(stage, Mapping) or not stage:
            continue
        name, spec = next(iter(stage.items()))
        if name == "$changeStream":
            out.append(("changeStream", namespace(db, coll)))
        elif name == "$out":
            tdb, tcoll = (spec.get("db", db), spec.get("coll")) if isinstance(spec, Mapping) else (db, spec)
            if isinstance(tdb, str) and isinstance(tcoll, str):
                out += [(a, namespace(tdb, tcoll)) for a in ("insert", "remove")]
        elif name == "$merge":
            into = spec.get("into") if isinstance(spec, Mapping) else spec
            tdb, tcoll = (into.get("db", db), into.get("coll")) if isinstance(into, Mapping) else (db, into)
            if isinstance(tdb, str) and isinstance(tcoll, str):
                out += [(a, namespace(tdb, tcoll)) for a in ("insert", "update")]
        elif name in ("$lookup", "$graphLookup", "$unionWith") and isinstance(spec, (Mapping, str)):
            source = spec if isinstance(spec, str) else spec.get("from", spec.get("coll"))
            if isinstance(source, Mapping):
                source = source.get("coll")
            if isinstance(source, str):
                out.append(("find", namespace(db, source)))
            sub = spec.get("pipeline") if isinstance(spec, Mapping) else None
            if isinstance(sub, list):
                _walk(sub, db, source if isinstance(source, str) else None, out)
        elif name == "$facet" and isinstance(spec, Mapping):
            for sub in spec.values():
                if isinstance(sub, list):
                    _walk(sub, db, coll, out)


def _auth_documents_changed(session: AuthSession) -> After:
    """A plain write to admin.system.users or system.roles (a restore, say): every connection
    resolves its roles again, as after createUser or grantRolesToUser."""
    def changed(reply: dict) -> None:
        session.security.changed()
    return changed


def _check_cursors(session: AuthSession, name: str, cmd: Mapping[str, Any], args: Any) -> None:
    ids = [cmd.get("getMore")] if name == "getMore" else list(cmd.get("cursors") or [])
    for cid in ids:
        if not isinstance(cid, int) or isinstance(cid, bool):
            continue
        owner = session.security.cursor_owner(cid)
        if owner is not None and owner != session.users:
            raise CommandError(ErrorCode.Unauthorized, f"cursor id {cid} was not created by the authenticated user")


def _owner_recorder(session: AuthSession) -> After:
    users = session.users

    def record(reply: dict) -> None:
        cursor = reply.get("cursor")
        if isinstance(cursor, Mapping) and cursor.get("id"):
            session.security.own_cursor(int(cursor["id"]), users)
    return record


def _list_databases(session: AuthSession, cmd: Mapping[str, Any]) -> After:
    """listDatabases: everything with the listDatabases action on the cluster; otherwise
    (authorizedDatabases not false) only the databases the user holds a privilege on."""
    if session.allows("listDatabases", CLUSTER):
        if cmd.get("authorizedDatabases") is not True:
            return None
    elif cmd.get("authorizedDatabases") is False:
        raise unauthorized("admin", cmd)

    def keep_authorized(reply: dict) -> None:
        if isinstance(reply.get("databases"), list):
            reply["databases"] = [d for d in reply["databases"]
                                  if isinstance(d, Mapping) and session.has_any_on_db(str(d.get("name")))]
        if "totalSize" in reply and isinstance(reply.get("databases"), list):
            reply["totalSize"] = sum(int(d.get("sizeOnDisk", 0)) for d in reply["databases"])
    return keep_authorized


def _owner_of(op: Any) -> frozenset:
    auth = getattr(getattr(op, "ctx", None), "auth", None)
    return auth.users if isinstance(auth, AuthSession) else frozenset()


def _own_ops(ctx: CommandContext, session: AuthSession, name: str, cmd: Mapping[str, Any]) -> After:
    """currentOp with `$ownOps: true` and killOp of one's own operation need no cluster action
    (mongod's rule): the reply keeps the user's operations only."""
    server = ctx.server
    ops = list(server.in_progress()) if server is not None else []
    if name == "killOp":
        target = cmd.get("op")
        owned = [op for op in ops if op.opid == target and _owner_of(op) == session.users]
        if not owned:
            raise unauthorized(cmd.get("$db", "admin"), cmd)
        return None
    if cmd.get("$ownOps") is not True:
        raise unauthorized(cmd.get("$db", "admin"), cmd)

    def keep_own(reply: dict) -> None:
        mine = {op.opid for op in (server.in_progress() if server is not None else [])
                if _owner_of(op) == session.users}
        if isinstance(reply.get("inprog"), list):
            reply["inprog"] = [e for e in reply["inprog"] if isinstance(e, Mapping) and e.get("opid") in mine]
    return keep_own


def _list_collections(session: AuthSession, cmd: Mapping[str, Any], db: str) -> After:
    """listCollections without the action on the database: with authorizedCollections and
    nameOnly, the collections the user holds some privilege on (mongod's rule)."""
    if not (cmd.get("authorizedCollections") is True and cmd.get("nameOnly") is True):
        raise unauthorized(db, cmd)

    def keep_authorized(reply: dict) -> None:
        cursor = reply.get("cursor")
        if isinstance(cursor, dict) and isinstance(cursor.get("firstBatch"), list):
            cursor["firstBatch"] = [c for c in cursor["firstBatch"]
                                    if session.has_any_on_collection(db, str(c.get("name")))]
    return keep_authorized


__all__ = ["allows", "authorize", "check_authenticated", "command_text", "needs", "require", "session_of",
           "unauthorized"]
