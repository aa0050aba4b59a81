"""Which worker process answers a request under `serve --workers N` (docs/design/workers.md).

The kernel spreads connections over the workers (SO_REUSEPORT), and a driver's pool may send a
getMore, or a transaction's next statement, on another connection than the one that began it.
So a request that continues state held by one process goes to that process:

- getMore and killCursors: the worker named in the cursor id's high bits (engine.cursor_worker);
- a command with a session and a txnNumber (a transaction's statements, commitTransaction,
  abortTransaction, retryable writes): the worker chosen by the session id (`session_worker`),
  so a session's transaction and its retry state live in one process;
- commands whose effect must hold in every process (ending or killing sessions, server
  parameters, fail points, the profiler level, fsyncLock/fsyncUnlock): every worker;
- currentOp: every worker, the operations merged; killOp: the worker named by the opid (opids
  are numbered so that `opid % count` is the worker: `opid_numbers`).

Everything else runs where it arrived. Pure functions of the command: no I/O here.
"""
from __future__ import annotations

import itertools
import os
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ..engine import cursor_worker

#: route() answers: run here, run on every worker, or split a killCursors by owner
LOCAL = -1
BROADCAST = -2
SPLIT = -3
GATHER = -4

#: commands that change per-process state every process must share
_EVERYWHERE = frozenset({"endSessions", "killSessions", "killAllSessions", "killAllSessionsByPattern",
                         "refreshSessions", "setParameter", "configureFailPoint", "fsyncUnlock",
                         "_ginkgoSetShardVersion"})


@dataclass(frozen=True)
class WorkerSeat:
    """What one worker process knows of its place among its siblings."""

    index: int                       # this worker (0 .. count - 1); cursor ids carry it
    count: int
    socket_dir: str                  # worker i listens for forwarded requests at socket_path(i)
    lock_fds: tuple[int, ...] = ()   # the supervisor's data-directory lock, inherited
    ready_fd: int = -1               # written once this worker listens
    parent_pid: int = 0              # the supervisor: a worker stops when it is gone

    def socket_path(self, index: int) -> str:
        return os.path.join(self.socket_dir, f"worker-{index}.sock")


def session_worker(lsid: Any, count: int) -> Optional[int]:
    """The worker that holds a session's transactions (the same in every process: crc32 of the
    session id's bytes, not Python's salted hash); None without a usable lsid."""
    if not isinstance(lsid, Mapping):
        return None
    ident = lsid.get("id")
    if not isinstance(ident, (bytes, bytearray)):
        return None
    return zlib.crc32(bytes(ident)) % count


def _owner(cid: Any, count: int) -> Optional[int]:
    if isinstance(cid, bool) or not isinstance(cid, int) or cid <= 0:
        return None  # not a cursor id: the local worker gives mongod's error
    owner = cursor_worker(cid)
    return owner if owner < count else None


def killcursors_owners(command: Mapping[str, Any], count: int) -> dict[int, list[Any]]:
    """killCursors' ids grouped by owning worker (ids naming no worker stay with none: -1)."""
    groups: dict[int, list[Any]] = {}
    cursors = command.get("cursors")
    for cid in cursors if isinstance(cursors, list) else ():
        owner = _owner(cid, count)
        groups.setdefault(LOCAL if owner is None else owner, []).append(cid)
    return groups


def opid_numbers(index: int, count: int) -> Iterator[int]:
    """Operation ids of worker `index`: positive, and `opid % count == index`."""
    return itertools.count(count + index, count)


def route(command: Mapping[str, Any], me: int, count: int) -> int:
    """The worker index to forward `command` to, or LOCAL, BROADCAST or SPLIT."""
    name = next(iter(command), "")
    target: Optional[int]
    if name == "getMore":
        target = _owner(command.get("getMore"), count)
    elif name == "killCursors":
        groups = killcursors_owners(command, count)
        owners = {me if w == LOCAL else w for w in groups}
        if len(owners) > 1:
            return SPLIT
        target = owners.pop() if owners else None
    elif name in _EVERYWHERE:
        return BROADCAST
    elif name == "profile" and command.get("profile") != -1:
        return BROADCAST  # setting the level (or slowms, sampleRate): every process profiles alike
    elif name == "fsync" and command.get("lock"):
        return BROADCAST  # every process must hold its writes back
    elif name == "currentOp":
        return GATHER
    elif name == "killOp":
        op = command.get("op")
        target = int(op) % count if isinstance(op, (int, float)) and not isinstance(op, bool) and op > 0 else None
    elif "txnNumber" in command:
        target = session_worker(command.get("lsid"), count)
    else:
        return LOCAL
    return LOCAL if target is None or target == me else target
