"""The awaitable hello through dispatch (the embedded client's blocking wait) and mongod's checks
of topologyVersion and maxAwaitTimeMS."""
from __future__ import annotations

import threading
import time

import pytest
from bson.int64 import Int64
from bson.objectid import ObjectId
from support.runner import run_without_engine

from ginkgodb.commands import TopologyWatch, awaitable_wait
from ginkgodb.commands.topology import PROCESS_TOPOLOGY


class WatchOnly:
    """A server whose topology a test controls, and that leaves the waiting to hello."""

    def __init__(self) -> None:
        self.topology = TopologyWatch()


def _hello(server=None, **fields):
    return run_without_engine({"hello": 1, **fields}, server=server)


def test_every_hello_reports_a_topology_version():
    tv = _hello()["topologyVersion"]
    assert tv == {"processId": PROCESS_TOPOLOGY.process_id, "counter": 0}
    assert isinstance(tv["processId"], ObjectId)


def test_a_current_version_waits_for_max_await_time():
    tv = _hello()["topologyVersion"]
    started = time.monotonic()
    reply = _hello(topologyVersion=tv, maxAwaitTimeMS=300)
    assert reply["ok"] == 1.0 and time.monotonic() - started >= 0.29
    assert reply["topologyVersion"] == tv


def test_a_topology_change_ends_the_wait_at_once():
    server = WatchOnly()
    tv = _hello(server)["topologyVersion"]
    threading.Timer(0.1, server.topology.changed).start()
    started = time.monotonic()
    reply = _hello(server, topologyVersion=tv, maxAwaitTimeMS=10_000)
    assert time.monotonic() - started < 5
    assert reply["topologyVersion"]["counter"] == 1


@pytest.mark.parametrize("tv", [
    {"processId": ObjectId(), "counter": Int64(0)},                  # another process: restarted
])
def test_a_foreign_process_id_is_answered_at_once(tv):
    started = time.monotonic()
    assert _hello(topologyVersion=tv, maxAwaitTimeMS=10_000)["ok"] == 1.0
    assert time.monotonic() - started < 1


def test_a_stale_counter_is_answered_at_once():
    server = WatchOnly()
    server.topology.changed()
    tv = {"processId": server.topology.process_id, "counter": Int64(0)}
    started = time.monotonic()
    assert _hello(server, topologyVersion=tv, maxAwaitTimeMS=10_000)["topologyVersion"]["counter"] == 1
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("fields, code, message", [
    ({"maxAwaitTimeMS": 10}, 31368, "A request with 'maxAwaitTimeMS' must include a 'topologyVersion'"),
    ({"topologyVersion": {"processId": ObjectId(), "counter": 0}}, 31368,
     "A request with a 'topologyVersion' must include 'maxAwaitTimeMS'"),
    ({"topologyVersion": {"processId": ObjectId(), "counter": -1}, "maxAwaitTimeMS": 10}, 31372,
     "topologyVersion must have a non-negative counter"),
    ({"topologyVersion": {"processId": PROCESS_TOPOLOGY.process_id, "counter": 5}, "maxAwaitTimeMS": 10}, 51764,
     "Received a topology version with counter: 5 which is greater than the server topology version counter: 0"),
    ({"topologyVersion": {"counter": 0}, "maxAwaitTimeMS": 10}, 40414,
     "BSON field 'TopologyVersion.processId' is missing but a required field"),
    ({"topologyVersion": {"processId": ObjectId(), "counter": 0}, "maxAwaitTimeMS": -1}, 2,
     "BSON field 'maxAwaitTimeMS' value must be >= 0, actual value '-1'"),
])
def test_malformed_awaitable_requests(fields, code, message):
    reply = _hello(**fields)
    assert (reply["code"], reply["errmsg"]) == (code, message)


def test_a_member_reports_a_counter_ahead_with_its_own_code():
    server = WatchOnly()
    server.topology.replica_set = True
    tv = {"processId": server.topology.process_id, "counter": 3}
    assert _hello(server, topologyVersion=tv, maxAwaitTimeMS=10)["code"] == 31382


def test_awaitable_wait_tells_the_server_how_long_to_wait():
    watch = TopologyWatch()
    current = {"processId": watch.process_id, "counter": Int64(0)}
    assert awaitable_wait({"hello": 1, "topologyVersion": current, "maxAwaitTimeMS": 2500}, watch) == 2.5
    assert awaitable_wait({"hello": 1}, watch) is None
    assert awaitable_wait({"hello": 1, "maxAwaitTimeMS": 5}, watch) is None  # malformed: hello answers
    watch.changed()
    assert awaitable_wait({"hello": 1, "topologyVersion": current, "maxAwaitTimeMS": 2500}, watch) is None


def test_subscribers_hear_of_the_next_change_once():
    watch = TopologyWatch()
    heard = []
    cancel = watch.subscribe(lambda: heard.append(watch.counter))
    watch.changed()
    watch.changed()
    assert heard == [1]
    cancel()  # harmless after it fired
    cancel_other = watch.subscribe(lambda: heard.append("no"))
    cancel_other()
    watch.changed()
    assert heard == [1]
