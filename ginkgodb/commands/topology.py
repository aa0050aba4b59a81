"""The topology version hello reports, and the awaitable hello that waits for it to change.

A `TopologyWatch` is one process's `topologyVersion`: a processId (new at every start) and a
counter that grows whenever what hello says changes (a replica set initiated, a step-down, an
election). Drivers send the version they last saw with `maxAwaitTimeMS`; the answer comes when
the counter moves or the time passes. The wire server waits on its event loop (`subscribe`),
never in a worker thread; the embedded client, which has no loop, waits on a condition (`wait`).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Optional

from bson.int64 import Int64
from bson.objectid import ObjectId

from ..bsonutil.types import type_name
from ..errors import CommandError, ErrorCode
from .fields import is_number


class TopologyWatch:
    """A topologyVersion and the parties waiting for it to change. Thread-safe."""

    def __init__(self) -> None:
        self.process_id = ObjectId()
        self._counter = 0
        self._cond = threading.Condition()
        self._listeners: list[Callable[[], None]] = []
        self.replica_set = False  # a member's counter moves; a standalone's never does

    @property
    def counter(self) -> int:
        return self._counter

    def version(self) -> dict:
        return {"processId": self.process_id, "counter": Int64(self._counter)}

    def changed(self) -> None:
        """What hello reports has changed: wake every waiter."""
        with self._cond:
            self._counter += 1
            listeners, self._listeners = self._listeners, []
            self._cond.notify_all()
        for notify in listeners:
            notify()

    def subscribe(self, notify: Callable[[], None]) -> Callable[[], None]:
        """Call `notify` (from whichever thread changes the topology) at the next change;
        returns a function that cancels the subscription."""
        with self._cond:
            self._listeners.append(notify)

        def cancel() -> None:
            with self._cond:
                if notify in self._listeners:
                    self._listeners.remove(notify)
        return cancel

    def wait(self, counter: int, seconds: float) -> None:
        """Block until the counter differs from `counter` or `seconds` pass."""
        until = time.monotonic() + seconds
        with self._cond:
            while self._counter == counter:
                left = until - time.monotonic()
                if left <= 0:
                    return
                self._cond.wait(left)


#: the embedded client's topology (a standalone: its counter never moves)
PROCESS_TOPOLOGY = TopologyWatch()


def topology_of(server: Any) -> TopologyWatch:
    """The wire server's watch, or the process's when embedded (or a server without one)."""
    watch = getattr(server, "topology", None)
    return watch if isinstance(watch, TopologyWatch) else PROCESS_TOPOLOGY


def awaitable_wait(cmd: Mapping[str, Any], watch: TopologyWatch) -> Optional[float]:
    """Seconds an awaitable hello must wait before it is answered, or None to answer now.

    None too for every malformed request: the hello handler then answers mongod's error.
    """
    try:
        return _wait_seconds(cmd, watch)
    except CommandError:
        return None


def check_awaitable(cmd: Mapping[str, Any], watch: TopologyWatch) -> Optional[float]:
    """mongod's checks of `topologyVersion` and `maxAwaitTimeMS` (errors as mongod's); the
    seconds to wait, or None when the reply is due now."""
    return _wait_seconds(cmd, watch)


def _wait_seconds(cmd: Mapping[str, Any], watch: TopologyWatch) -> Optional[float]:
    name = next(iter(cmd), "hello")
    tv = cmd.get("topologyVersion")
    ms = cmd.get("maxAwaitTimeMS")
    if ms is not None:
        if not is_number(ms) or isinstance(ms, bool):
            raise CommandError(ErrorCode.TypeMismatch,
                               f"BSON field '{name}.maxAwaitTimeMS' is the wrong type '{type_name(ms)}', "
                               "expected types '[long, int, decimal, double]'")
        if ms < 0:
            raise CommandError(ErrorCode.BadValue,
                               f"BSON field 'maxAwaitTimeMS' value must be >= 0, actual value '{int(ms)}'")
    if tv is None or ms is None:
        if tv is not None or ms is not None:
            raise CommandError(ErrorCode.AwaitableHelloNeedsBothFields,
                               "A request with a 'topologyVersion' must include 'maxAwaitTimeMS'"
                               if tv is not None else
                               "A request with 'maxAwaitTimeMS' must include a 'topologyVersion'")
        return None
    if not isinstance(tv, Mapping):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field '{name}.topologyVersion' is the wrong type '{type_name(tv)}', "
                           "expected type 'object'")
    process_id, counter = tv.get("processId"), tv.get("counter")
    if process_id is None or counter is None:
        missing = "processId" if process_id is None else "counter"
        raise CommandError(ErrorCode.IDLFailedToParse,
                           f"BSON field 'TopologyVersion.{missing}' is missing but a required field")
    if not isinstance(process_id, ObjectId):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field 'TopologyVersion.processId' is the wrong type '{type_name(process_id)}', "
                           "expected type 'objectId'")
    if not isinstance(counter, int) or isinstance(counter, bool):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field 'TopologyVersion.counter' is the wrong type '{type_name(counter)}', "
                           "expected type 'long'")
    if counter < 0:
        raise CommandError(ErrorCode.TopologyVersionCounterNegative,
                           "topologyVersion must have a non-negative counter")
    if process_id != watch.process_id:
        return None  # the server restarted since: answer at once with the new processId
    current = watch.counter
    if counter > current:
        code = (ErrorCode.TopologyVersionCounterAhead if watch.replica_set
                else ErrorCode.StandaloneTopologyVersionMismatch)
        raise CommandError(code,
                           f"Received a topology version with counter: {counter} which is greater than "
                           f"the server topology version counter: {current}")
    if counter < current:
        return None  # the client is behind: answer at once
    return float(ms) / 1000.0
