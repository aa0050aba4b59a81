"""Reply documents -> pymongo's exceptions, following pymongo's own rules.

A command reply with ok: 0 becomes OperationFailure (or the subclass pymongo picks for its code);
a write reply's writeErrors become WriteError/DuplicateKeyError (single writes) or BulkWriteError
(bulk writes, with pymongo's details shape); writeConcernError becomes WriteConcernError.
"""
from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any, NoReturn, Optional

from pymongo.errors import (
    BulkWriteError,
    CursorNotFound,
    DuplicateKeyError,
    ExecutionTimeout,
    NotPrimaryError,
    OperationFailure,
    WriteConcernError,
    WriteError,
    WTimeoutError,
)

#: the wire version we report (MongoDB 7.0), used where pymongo records the server's
MAX_WIRE_VERSION = 21

_SHUTDOWN_CODES = frozenset({11600, 91})
_NOT_PRIMARY_CODES = frozenset({10058, 10107, 13435, 11602, 13436, 189}) | _SHUTDOWN_CODES
_DUPLICATE_KEY_CODES = frozenset({11000, 11001, 12582})


def check_command_reply(reply: Mapping[str, Any], allowable_errors: Optional[Container] = None,
                        parse_write_concern_error: bool = False) -> None:
    """Raise what pymongo raises for this command reply; return when it succeeded."""
    if "ok" not in reply:
        raise OperationFailure(reply.get("$err"), reply.get("code"), reply, MAX_WIRE_VERSION)
    if parse_write_concern_error and "writeConcernError" in reply:
        error = dict(reply["writeConcernError"])
        if reply.get("errorLabels"):
            error["errorLabels"] = reply["errorLabels"]
        raise_write_concern_error(error)
    if reply["ok"]:
        return
    errmsg = reply.get("errmsg", "")
    code = reply.get("code")
    if allowable_errors:
        if code is not None and code in allowable_errors:
            return
        if code is None and errmsg in allowable_errors:
            return
    if code in _NOT_PRIMARY_CODES:
        raise NotPrimaryError(errmsg, reply)
    if code in _DUPLICATE_KEY_CODES:
        raise DuplicateKeyError(errmsg, code, reply, MAX_WIRE_VERSION)
    if code == 50:
        raise ExecutionTimeout(errmsg, code, reply, MAX_WIRE_VERSION)
    if code == 43:
        raise CursorNotFound(errmsg, code, reply, MAX_WIRE_VERSION)
    raise OperationFailure(errmsg, code, reply, MAX_WIRE_VERSION)


def check_write_reply(reply: Mapping[str, Any]) -> None:
    """A single write's reply: its last write error, else its write concern error."""
    write_errors = reply.get("writeErrors")
    if write_errors:
        raise_last_write_error(write_errors)
    wce = write_concern_error_of(reply)
    if wce:
        raise_write_concern_error(wce)


def raise_last_write_error(write_errors: list) -> NoReturn:
    error = write_errors[-1]
    if error.get("code") == 11000:
        raise DuplicateKeyError(error.get("errmsg"), 11000, error)
    raise WriteError(error.get("errmsg"), error.get("code"), error)


def raise_write_concern_error(error: Mapping[str, Any]) -> NoReturn:
    if error.get("code") == 50 or (error.get("errInfo") or {}).get("wtimeout"):
        raise WTimeoutError(error.get("errmsg"), error.get("code"), error)
    raise WriteConcernError(error.get("errmsg"), error.get("code"), error)


def write_concern_error_of(reply: Mapping[str, Any]) -> Optional[dict]:
    """The writeConcernError with the reply's errorLabels attached, or None."""
    wce = reply.get("writeConcernError")
    if not wce:
        return None
    wce = dict(wce)
    if reply.get("errorLabels"):
        wce["errorLabels"] = reply["errorLabels"]
    return wce


def raise_bulk_write_error(full_result: dict) -> NoReturn:
    """BulkWriteError over the merged results; write errors sorted by operation index."""
    if full_result["writeErrors"]:
        full_result["writeErrors"].sort(key=lambda error: error["index"])
    raise BulkWriteError(full_result)
