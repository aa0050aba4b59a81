"""Database and collection naming rules, with mongod's errors."""
from __future__ import annotations

from ..errors import CommandError, ErrorCode

_BAD_DB_CHARS = set('/\\. "$\x00')
MAX_DB_NAME = 63
MAX_NAMESPACE = 255


#: names already found valid (every command checks its database and collection: most name the
#: same few); bounded, emptied when full
_VALID: set = set()
_VALID_MAX = 4096


def _remember(key: object) -> None:
    if len(_VALID) >= _VALID_MAX:
        _VALID.clear()
    _VALID.add(key)


def check_db_name(db: object) -> str:
    if type(db) is str and db in _VALID:
        return db
    valid = _check_db_name(db)
    _remember(valid)
    return valid


def _check_db_name(db: object) -> str:
    if not isinstance(db, str) or not db:
        raise CommandError(ErrorCode.InvalidNamespace, f"Invalid database name: '{db}'")
    if len(db) > MAX_DB_NAME:
        raise CommandError(ErrorCode.InvalidNamespace,
                           f"db name is too long. Max length is {MAX_DB_NAME} bytes: '{db}'")
    if any(ch in _BAD_DB_CHARS for ch in db):
        raise CommandError(ErrorCode.InvalidNamespace, f"Invalid database name: '{db}'")
    return db


def check_collection_name(db: str, coll: object, *, for_create: bool = False) -> str:
    if not for_create and type(coll) is str and (db, coll) in _VALID:
        return coll
    valid = _check_collection_name(db, coll, for_create)
    if not for_create:
        _remember((db, valid))
    return valid


def _check_collection_name(db: str, coll: object, for_create: bool) -> str:
    if not isinstance(coll, str):
        raise CommandError(ErrorCode.InvalidNamespace,
                           f"collection name has invalid type {type(coll).__name__}")
    ns = f"{db}.{coll}"
    if not coll or "\x00" in coll or coll.startswith(".") or ("$" in coll and not coll.startswith("$cmd")):
        raise CommandError(ErrorCode.InvalidNamespace, f"Invalid namespace specified '{ns}'")
    if len(ns.encode()) > MAX_NAMESPACE:
        raise CommandError(ErrorCode.InvalidNamespace,
                           f"Fully qualified namespace is too long. Namespace: {ns} Max: {MAX_NAMESPACE}")
    if for_create and coll.startswith("system.") and coll not in _ALLOWED_SYSTEM:
        raise CommandError(ErrorCode.InvalidNamespace, f"Invalid system namespace: {ns}")
    return coll


_ALLOWED_SYSTEM = {"system.js", "system.views", "system.profile", "system.buckets", "system.users"}


#: collections that user writes never touch directly (mongod's userAllowedWriteNS)
_NOT_WRITABLE = frozenset({"system.views", "system.profile"})


def check_writable(db: str, coll: str) -> None:
    """73 InvalidNamespace for insert/update/delete/findAndModify on system.views or
    system.profile (views change through create/collMod/drop, the profile through profiling)."""
    if coll in _NOT_WRITABLE:
        raise CommandError(ErrorCode.InvalidNamespace, f"cannot write to {db}.{coll}")
