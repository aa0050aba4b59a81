"""Users and user-defined roles as mongod keeps them: documents of admin.system.users and
admin.system.roles, read and written through the engine's face (so they survive restarts and
travel with dump/restore). A user document holds salted keys only (auth_scram.py).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import bson
from bson.raw_bson import RawBSONDocument

from ..engine import DeleteStatement, FindRequest, UpdateStatement
from ..errors import CommandError, ErrorCode

ADMIN = "admin"
USERS = "system.users"
ROLES = "system.roles"


def _decode(doc: Any) -> dict:
    return bson.decode(doc.raw) if isinstance(doc, RawBSONDocument) else dict(doc)


def find_docs(engine: Any, coll: str, filt: dict, limit: int = 0) -> list[dict]:
    if engine.collection_entry(ADMIN, coll) is None:
        return []
    cursor = engine.find(ADMIN, coll, FindRequest(filter=filt, sort={"_id": 1}, limit=limit))
    try:
        out: list[dict] = []
        while True:
            batch = cursor.next_batch(None)
            if not batch:
                return out
            out.extend(_decode(d) for d in batch)
    finally:
        cursor.close()


def user_id(db: str, user: str) -> str:
    return f"{db}.{user}"


def find_user(engine: Any, db: str, user: str) -> Optional[dict]:
    found = find_docs(engine, USERS, {"_id": user_id(db, user)}, limit=1)
    return found[0] if found else None


def has_users(engine: Any) -> bool:
    return bool(find_docs(engine, USERS, {}, limit=1))


def find_role(engine: Any, db: str, role: str) -> Optional[dict]:
    found = find_docs(engine, ROLES, {"_id": user_id(db, role)}, limit=1)
    return found[0] if found else None


def insert(engine: Any, coll: str, doc: dict, exists: CommandError) -> None:
    outcome = engine.insert(ADMIN, coll, [doc])
    for err in outcome.errors:
        if err.get("code") == ErrorCode.DuplicateKey:
            raise exists
        raise CommandError(ErrorCode(err.get("code", ErrorCode.InternalError)), err.get("errmsg", ""))


def replace(engine: Any, coll: str, doc: dict) -> None:
    outcome = engine.update(ADMIN, coll, [UpdateStatement({"_id": doc["_id"]}, doc)])
    for err in outcome.errors:
        raise CommandError(ErrorCode(err.get("code", ErrorCode.InternalError)), err.get("errmsg", ""))


def delete(engine: Any, coll: str, filt: dict) -> int:
    if engine.collection_entry(ADMIN, coll) is None:
        return 0
    return engine.delete(ADMIN, coll, [DeleteStatement(filt, 0)]).n


def role_names(value: Any, default_db: str, command: str) -> list[dict]:
    """A `roles` array as {role, db} documents (a bare name is a role of `default_db`)."""
    if not isinstance(value, list):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field '{command}.roles' is the wrong type '{type(value).__name__}', "
                           "expected type 'array'")
    out = []
    for item in value:
        if isinstance(item, str):
            out.append({"role": item, "db": default_db})
        elif isinstance(item, Mapping) and isinstance(item.get("role"), str) and isinstance(item.get("db"), str):
            out.append({"role": item["role"], "db": item["db"]})
        else:
            raise CommandError(ErrorCode.BadValue,
                               "Role names must be either strings or objects with \"role\" and \"db\" fields")
    return out


__all__ = ["ADMIN", "ROLES", "USERS", "delete", "find_docs", "find_role", "find_user", "has_users", "insert",
           "replace", "role_names", "user_id"]
