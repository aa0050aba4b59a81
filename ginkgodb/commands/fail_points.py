"""Fail points for driver test suites: the registry `configureFailPoint` sets, and the one
check dispatch runs before a command (`fail_before`) and after it (`fail_after`).

Served fail points (mongod's names and data):
- `failCommand`: for the commands named in `failCommands` (optionally only for one `appName`
  or `namespace`): `closeConnection`, `blockConnection` + `blockTimeMS`, `errorCode` (+ `errmsg`,
  `errorLabels`), `writeConcernError` (added to the reply of a command that ran);
- `failGetMoreAfterCursorCheckout`: getMore fails with `errorCode` (never another member's
  oplog tailing: an internal client, as for failCommand);
- `onPrimaryTransactionalWrite`: a retryable write (one with `txnNumber`) fails with
  `failBeforeCommitExceptionCode` before it commits, or, by default, applies and then loses its
  connection (`closeConnection`), so the driver retries it.
Modes: `off`, `alwaysOn`, `{times: n}`, `{skip: n}`, `{activationProbability: p}`.

Connection-level actions need the wire server: dispatch marks `ctx.extra[CLOSE_CONNECTION]` and
the server closes instead of replying. The embedded client has no connection: a
`closeConnection` there answers 6 HostUnreachable without running the command.
"""
from __future__ import annotations

import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, cast

from ..bsonutil.types import type_name
from ..errors import CommandError, ErrorCode, code_name
from ..repl.app_names import INTERNAL as INTERNAL_APPS
from .context import CommandContext
from .fields import is_number
from .txn_names import RETRYABLE_WRITES

CLOSE_CONNECTION = "close_connection"   # ctx.extra flag: the server closes instead of replying
FAIL_COMMAND_MESSAGE = "Failing command via 'failCommand' failpoint"
KNOWN = ("failCommand", "failGetMoreAfterCursorCheckout", "onPrimaryTransactionalWrite")
#: the data each fail point understands (anything else is refused: it would change what fails)
_DATA_FIELDS = {
    "failCommand": frozenset({"failCommands", "errorCode", "errmsg", "errorLabels", "closeConnection",
                              "blockConnection", "blockTimeMS", "writeConcernError", "appName", "namespace",
                              "failInternalCommands"}),
    "failGetMoreAfterCursorCheckout": frozenset({"errorCode", "errmsg", "errorLabels", "closeConnection"}),
    "onPrimaryTransactionalWrite": frozenset({"failBeforeCommitExceptionCode", "closeConnection"}),
}
#: commands a fail point never fails (mongod bans them so that tests can always turn it off)
_NEVER_FAILED = frozenset({"configureFailPoint", "waitForFailPoint"})


@dataclass
class FailPoint:
    name: str
    mode: str = "off"                 # off | alwaysOn | times | skip | activationProbability
    value: float = 0                  # times left, skips left, or the probability
    data: dict = field(default_factory=dict)
    entered: int = 0                  # times it fired since it was last configured


class FailPointRegistry:
    """Process-wide, as mongod's. Thread-safe."""

    def __init__(self) -> None:
        self._points = {name: FailPoint(name) for name in KNOWN}
        self._lock = threading.Lock()
        self.targets: frozenset[str] = frozenset()   # command names an active failCommand names
        self.active = False                          # any fail point on: dispatch checks them

    def configure(self, name: str, mode: Any, data: Any) -> int:
        """Set a fail point; returns how often it had fired (mongod's `count`)."""
        point = self._points.get(name)
        if point is None:
            raise CommandError(ErrorCode.FailPointSetFailed, f"{name} not found")
        kind, value = _parse_mode(mode)
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise CommandError(ErrorCode.TypeMismatch, "the 'data' field must be an object")
        for key in data:
            if key not in _DATA_FIELDS[name]:
                raise CommandError(ErrorCode.NotImplemented,
                                   f"fail point {name} with '{key}' is not supported by ginkgodb")
        with self._lock:
            count = point.entered
            point.mode, point.value, point.data, point.entered = kind, value, dict(data), 0
            self._retarget()
        return count

    def _retarget(self) -> None:
        self.active = any(p.mode != "off" for p in self._points.values())
        fc = self._points["failCommand"]
        names = fc.data.get("failCommands") if fc.mode != "off" else None
        self.targets = frozenset(n for n in names if isinstance(n, str)) if isinstance(names, list) else frozenset()

    def fire(self, name: str) -> Optional[dict]:
        """The fail point's data if it fires now (counting it), else None. The caller has
        checked that the fail point's conditions apply to this command."""
        point = self._points[name]
        with self._lock:
            if point.mode == "off":
                return None
            if point.mode == "skip" and point.value > 0:
                point.value -= 1
                return None
            if point.mode == "activationProbability" and random.random() >= point.value:
                return None
            if point.mode == "times":
                point.value -= 1
                if point.value <= 0:
                    point.mode = "off"
                    self._retarget()
            point.entered += 1
            return point.data

    def data(self, name: str) -> Optional[dict]:
        """The data of an active fail point (without firing it)."""
        point = self._points[name]
        return point.data if point.mode != "off" else None

    def reset(self) -> None:
        with self._lock:
            for point in self._points.values():
                point.mode, point.value, point.data, point.entered = "off", 0, {}, 0
            self._retarget()


FAIL_POINTS = FailPointRegistry()


def _parse_mode(mode: Any) -> tuple[str, float]:
    if isinstance(mode, str):
        if mode in ("off", "alwaysOn"):
            return mode, 0
        raise CommandError(ErrorCode.BadValue, f"unknown mode: {mode}")
    if not isinstance(mode, Mapping):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"'mode' must be a string or JSON object, found: {type_name(mode)}")
    for key in mode:
        if key not in ("times", "skip", "activationProbability"):
            raise CommandError(ErrorCode.BadValue,
                               "'mode' must be one of 'off', 'alwaysOn', 'times', 'skip' and "
                               "'activationProbability'")
    if "times" in mode:
        n = mode["times"]
        if not is_number(n) or isinstance(n, bool) or n < 0:
            raise CommandError(ErrorCode.BadValue, "'times' option to 'mode' must be positive")
        return ("times", float(n)) if n > 0 else ("off", 0)
    if "skip" in mode:
        n = mode["skip"]
        if not is_number(n) or isinstance(n, bool) or n < 0:
            raise CommandError(ErrorCode.BadValue, "'skip' option to 'mode' must be positive")
        return "skip", float(n)
    p = mode["activationProbability"]
    if not is_number(p) or isinstance(p, bool) or not 0 <= p <= 1:
        raise CommandError(ErrorCode.BadValue,
                           "'activationProbability' option to 'mode' must be a double between 0 and 1")
    return "activationProbability", float(p)


# ---------------------------------------------------------------------- evaluation in dispatch
@dataclass
class Firing:
    """A fail point that fired for this command and still acts after it runs."""

    write_concern_error: Optional[dict] = None
    close_after: bool = False
    labels: Optional[list] = None


def _app_name(ctx: CommandContext) -> Optional[str]:
    meta = ctx.client_metadata if isinstance(ctx.client_metadata, Mapping) else {}
    app = meta.get("application")
    return app.get("name") if isinstance(app, Mapping) else None


def _internal(ctx: CommandContext) -> bool:
    """A connection another member opened (heartbeats, oplog tailing): mongod's internal client."""
    return _app_name(ctx) in INTERNAL_APPS


def _fail_command_applies(ctx: CommandContext, name: str, cmd: Mapping[str, Any], data: Mapping) -> bool:
    names = data.get("failCommands")
    if not isinstance(names, list) or name not in names:
        return False
    app = _app_name(ctx)
    if "appName" in data and app != data["appName"]:
        return False
    if _internal(ctx) and not data.get("failInternalCommands"):
        return False           # another member's connection: mongod's internal client
    if "namespace" in data:
        first = cmd.get(name)
        ns = f"{cmd.get('$db', '')}.{first}" if isinstance(first, str) else f"{cmd.get('$db', '')}.$cmd"
        if ns != data["namespace"]:
            return False
    return True


#: a reply field (dispatch removes it) marking a fail point's error: True when the fail point
#: chose the reply's error labels, so the server adds none of its own (mongod: `errorLabels`
#: replaces the computed ones); False when it did not (the server labels it, but a getMore it
#: fails never counts as a change stream's: mongod fails it before the cursor is known)
INJECTED = "$injected"


def _error(code: Any, errmsg: Any, labels: Any) -> CommandError:
    if not is_number(code) or isinstance(code, bool):
        raise CommandError(ErrorCode.TypeMismatch, "failCommand's 'errorCode' must be a number")
    message = errmsg if isinstance(errmsg, str) else FAIL_COMMAND_MESSAGE
    given = isinstance(labels, list)
    return CommandError(cast(ErrorCode, int(code)), message, labels=tuple(labels) if given else (),
                        info={INJECTED: given})


def _close(ctx: CommandContext) -> CommandError:
    """Drop the connection (the server closes it; the reply is never sent)."""
    if ctx.server is None:
        return CommandError(ErrorCode.HostUnreachable,
                            "connection closed by the failCommand fail point (the embedded client has "
                            "no connection to close)")
    ctx.extra[CLOSE_CONNECTION] = True
    return CommandError(ErrorCode.FailPointEnabled, "Failing command due to 'failCommand' failpoint")


def fail_before(ctx: CommandContext, name: str, cmd: Mapping[str, Any]) -> Optional[Firing]:
    """Run before the command: raise what a fired fail point makes of it, or return what it
    still does after the command ran. Cheap when no fail point is set."""
    if name in _NEVER_FAILED:
        return None
    firing: Optional[Firing] = None
    if name in FAIL_POINTS.targets:
        data = FAIL_POINTS.data("failCommand")
        if data is not None and _fail_command_applies(ctx, name, cmd, data):
            acts_before = any(k in data for k in ("closeConnection", "blockConnection", "errorCode"))
            if (acts_before or "writeConcernError" in data) and FAIL_POINTS.fire("failCommand") is not None:
                firing = _fail_command(ctx, data)
    if name == "getMore" and not _internal(ctx):
        # a secondary's oplog tailing is an internal client, spared as failCommand spares it:
        # otherwise, on a set of three, a one-shot fail point meant for a test's change stream
        # is spent by whichever secondary asks for the oplog first (mongod's fetchers stream
        # the oplog through exhaust cursors and do not spend it either)
        data = FAIL_POINTS.data("failGetMoreAfterCursorCheckout")
        if data is not None and FAIL_POINTS.fire("failGetMoreAfterCursorCheckout") is not None:
            if data.get("closeConnection"):
                raise _close(ctx)
            error = _error(data.get("errorCode", ErrorCode.InternalError), data.get("errmsg"), data.get("errorLabels"))
            if error.info[INJECTED] is False:  # after the cursor is checked out: labelled as the
                del error.info[INJECTED]       # getMore's own failure (a change stream's, say)
            raise error
    if "txnNumber" in cmd and name in RETRYABLE_WRITES and "autocommit" not in cmd:
        data = FAIL_POINTS.data("onPrimaryTransactionalWrite")
        if (data is not None and not _already_done(ctx, cmd)
                and FAIL_POINTS.fire("onPrimaryTransactionalWrite") is not None):
            code = data.get("failBeforeCommitExceptionCode")
            if code is not None:  # the write fails before it commits; the connection closes too,
                if data.get("closeConnection", True):  # unless told not to (as mongod)
                    raise _close(ctx)
                raise _error(code, "onPrimaryTransactionalWrite failpoint", None)
            if data.get("closeConnection", True):
                firing = firing or Firing()
                firing.close_after = True
    return firing


def _already_done(ctx: CommandContext, cmd: Mapping[str, Any]) -> bool:
    """A retry of a retryable write that already committed writes nothing, so a fail point on
    the write does not fire (mongod answers it from the session's history)."""
    from ..engine import session_key
    lsid = cmd.get("lsid")
    key = session_key(lsid) if lsid is not None else None
    stored = ctx.engine.sessions.stored_retryable(key) if key is not None else None
    return stored is not None and stored.get("txnNumber") == cmd.get("txnNumber")


def _fail_command(ctx: CommandContext, data: Mapping) -> Optional[Firing]:
    if data.get("closeConnection"):
        raise _close(ctx)
    if data.get("blockConnection"):
        ms: Any = data.get("blockTimeMS")
        if not is_number(ms) or isinstance(ms, bool):
            raise CommandError(ErrorCode.InvalidOptions,
                               "must specify 'blockTimeMS' when 'blockConnection' is true")
        time.sleep(max(float(ms), 0.0) / 1000.0)
    labels = data.get("errorLabels")
    if "errorCode" in data:
        raise _error(data["errorCode"], data.get("errmsg"), labels)
    wce = data.get("writeConcernError")
    if isinstance(wce, Mapping) or isinstance(labels, list):
        return Firing(write_concern_error=dict(wce) if isinstance(wce, Mapping) else None,
                      labels=list(labels) if isinstance(labels, list) else None)
    return None


def fail_after(ctx: CommandContext, firing: Firing, reply: dict) -> None:
    """What a fired fail point does to the reply of a command that ran."""
    if firing.write_concern_error is not None and reply.get("ok") == 1.0:
        wce = dict(firing.write_concern_error)
        if "code" in wce and "codeName" not in wce and is_number(wce["code"]):
            wce["codeName"] = code_name(int(wce["code"]))
        reply["writeConcernError"] = wce
    if firing.labels is not None and (firing.write_concern_error is not None or reply.get("ok") != 1.0):
        reply["errorLabels"] = list(firing.labels)
        reply[INJECTED] = True
    if firing.close_after:
        if ctx.server is not None:
            ctx.extra[CLOSE_CONNECTION] = True
