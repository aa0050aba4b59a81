"""A shard's side of routing: the collection versions routers told it, and the `shardVersion`
check that answers 13388 StaleConfig (docs/design/sharding.md, "shardVersion and StaleConfig").

A router sets a namespace's version with `_ginkgoSetShardVersion` after shardCollection, a split
or a migration (and marks a migration's critical section). A versioned request whose epoch
differs, or whose major version differs from the one set here, or that arrives during the
critical section, is refused with StaleConfig so the router reloads its chunk map. A namespace
with no version set (a shard that restarted) accepts versioned requests: mongod would refresh
from its config servers instead (compatibility.md). The table is per process.
"""
from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from bson.timestamp import Timestamp

from ..errors import CommandError, ErrorCode

_VERSIONS: dict[str, dict[str, Any]] = {}   # namespace -> {e, t, v, critical}
_LOCK = threading.Lock()


def _namespace(cmd: Mapping) -> str:
    name = next(iter(cmd))
    target = cmd[name]
    if name == "getMore":
        target = cmd.get("collection")
    return f"{cmd.get('$db', 'admin')}.{target}" if isinstance(target, str) else ""


def _stale(ns: str, received: Any, wanted: Any, why: str) -> CommandError:
    return CommandError(ErrorCode.StaleConfig, why,
                        info={"ns": ns, "vReceived": received, "vWanted": wanted})


def check_shard_version(value: Any, spec: Any, cmd: Mapping) -> None:
    """Refuse a versioned request a router sent from an older chunk map."""
    if not _VERSIONS or not isinstance(value, Mapping):
        return
    ns = _namespace(cmd)
    with _LOCK:
        known = _VERSIONS.get(ns)
    if known is None:
        return
    wanted = {"e": known["e"], "t": known["t"], "v": known["v"]}
    if known.get("critical"):
        raise _stale(ns, value, wanted, f"migration commit in progress for {ns}")
    received_v = value.get("v")
    if value.get("e") != known["e"]:
        raise _stale(ns, value, wanted, f"epoch mismatch detected for {ns}")
    if not isinstance(received_v, Timestamp) or received_v.time != known["v"].time:
        raise _stale(ns, value, wanted, f"version mismatch detected for {ns}")


def set_version(ns: str, version: Any) -> None:
    """Record (or with None forget) a namespace's version: {e, t, v, critical}."""
    with _LOCK:
        if version is None:
            _VERSIONS.pop(ns, None)
        else:
            _VERSIONS[ns] = version
