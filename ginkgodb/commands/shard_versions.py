"""A shard's side of routing: the collection versions routers told it, and the `shardVersion`
check that answers 13388 StaleConfig (docs/design/sharding.md, "shardVersion and StaleConfig").

A router sets a namespace's version with `_ginkgoSetShardVersion` after shardCollection, a split
or a migration (and marks a migration's critical section, and whether the shard holds orphans:
a request that counts on there being none, `noOrphans`, is then StaleConfig with `orphans: true`
and the router takes its filtering path). A versioned request whose epoch
differs, or whose major version differs from the one set here, or that arrives during the
critical section, is refused with StaleConfig so the router reloads its chunk map. A namespace
with no version set (a shard that restarted, or was added later) answers StaleConfig with
`unknown: true` and the router sends it the version (mongod's shard would refresh from its
config servers itself). The table is per process.
"""
from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from bson.timestamp import Timestamp

from ..errors import CommandError, ErrorCode

_VERSIONS: dict[str, dict[str, Any]] = {}   # namespace -> {e, t, v, critical, orphans}
_IN_FLIGHT: dict[str, int] = {}             # namespace -> versioned requests running
_LOCK = threading.Lock()
_DRAINED = threading.Condition(_LOCK)
_DRAIN_WAITERS = 0                          # threads in wait_drained (under _LOCK)
_VERSION_SET = threading.Condition(_LOCK)   # a version or orphans flag changed (cleanupOrphaned waits)


def _namespace(cmd: Mapping) -> str:
    name = next(iter(cmd))
    target = cmd[name]
    if name == "getMore":
        target = cmd.get("collection")
    elif name == "explain" and isinstance(target, Mapping) and target:
        target = next(iter(target.values()))
    return f"{cmd.get('$db', 'admin')}.{target}" if isinstance(target, str) else ""


def _stale(ns: str, received: Any, wanted: Any, why: str) -> CommandError:
    return CommandError(ErrorCode.StaleConfig, why,
                        info={"ns": ns, "vReceived": received, "vWanted": wanted})


def _check(ns: str, value: Mapping) -> None:
    """Refuse a versioned request a router sent from an older chunk map (under _LOCK). The
    current version passes after four look-ups; what a refusal reports is built only then."""
    known = _VERSIONS.get(ns)
    if known is not None and not known.get("critical") and known["e"] == value.get("e"):
        received_v = value.get("v")
        if (isinstance(received_v, Timestamp) and received_v.time == known["v"].time
                and not (known["orphans"] and value.get("noOrphans"))):
            return
    _check_each(ns, value, known)


def _check_each(ns: str, value: Mapping, known: Any) -> None:
    """_check's conditions one by one, in the order mongod's checks run: the StaleConfig of the
    first that fails."""
    if known is None:   # restarted, or added after the collection was sharded: the router tells us
        raise CommandError(ErrorCode.StaleConfig, f"sharding status of collection {ns} is not currently known "
                                                  "and needs to be recovered",
                           info={"ns": ns, "vReceived": value, "unknown": True})
    wanted = {"e": known["e"], "t": known["t"], "v": known["v"]}
    if known.get("critical"):
        raise _stale(ns, value, wanted, f"migration commit in progress for {ns}")
    if value.get("noOrphans") and known.get("orphans"):
        raise CommandError(ErrorCode.StaleConfig, f"{ns} holds documents of chunks it does not own (a migration's)",
                           info={"ns": ns, "vReceived": value, "vWanted": wanted, "orphans": True})
    received_v = value.get("v")
    if value.get("e") != known["e"]:
        raise _stale(ns, value, wanted, f"epoch mismatch detected for {ns}")
    if not isinstance(received_v, Timestamp) or received_v.time != known["v"].time:
        raise _stale(ns, value, wanted, f"version mismatch detected for {ns}")


def enter_versioned(cmd: Mapping) -> str:
    """Check a request's `shardVersion` and count it as in flight on its namespace (returned;
    "" when the request is not versioned): the caller calls leave_versioned(ns) when it returns,
    so that a migration's critical section can wait for the requests that passed the check.
    Two calls, not a context manager: this runs on every request a router sends."""
    value = cmd.get("shardVersion")
    if type(value) is not dict and not isinstance(value, Mapping):   # a dict: no ABC check
        return ""
    ns = _namespace(cmd)
    if not ns:
        return ""
    with _LOCK:
        _check(ns, value)
        _IN_FLIGHT[ns] = _IN_FLIGHT.get(ns, 0) + 1
    return ns


def leave_versioned(ns: str) -> None:
    """The versioned request enter_versioned counted on `ns` returned."""
    with _LOCK:
        left = _IN_FLIGHT[ns] - 1
        if left:
            _IN_FLIGHT[ns] = left
        else:
            del _IN_FLIGHT[ns]
            if _DRAIN_WAITERS:   # Condition.notify_all costs several Python calls even with no waiter
                _DRAINED.notify_all()


def wait_drained(ns: str, timeout: float) -> bool:
    """Wait until no versioned request on `ns` is running (the critical section's start)."""
    global _DRAIN_WAITERS
    with _LOCK:
        _DRAIN_WAITERS += 1
        try:
            return _DRAINED.wait_for(lambda: ns not in _IN_FLIGHT, timeout)
        finally:
            _DRAIN_WAITERS -= 1


def set_orphans(ns: str, orphans: bool) -> None:
    with _LOCK:
        if ns in _VERSIONS:
            _VERSIONS[ns] = {**_VERSIONS[ns], "orphans": orphans}
        _VERSION_SET.notify_all()


def set_version(ns: str, version: Any, orphans: Any = None) -> None:
    """Record (or with None forget) a namespace's version: {e, t, v, critical}; `orphans`
    (True/False, None: unchanged) says whether the shard holds documents of chunks it does not
    own (a migration's clone before its commit, the donor's copy before the range deleter)."""
    with _LOCK:
        if version is None:
            _VERSIONS.pop(ns, None)
        else:
            before = _VERSIONS.get(ns, {}).get("orphans", False)
            _VERSIONS[ns] = {**version, "orphans": before if orphans is None else bool(orphans)}
        _VERSION_SET.notify_all()


def wait_orphans_deleted(ns: str, timeout: float) -> bool:
    """Wait up to `timeout` s until this shard holds no orphans of `ns` (a router's range
    deleter clears the flag once it deleted the ranges): False if it still does."""
    with _LOCK:
        return _VERSION_SET.wait_for(lambda: not _VERSIONS.get(ns, {}).get("orphans"), timeout)
