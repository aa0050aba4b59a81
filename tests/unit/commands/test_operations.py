"""currentOp and killOp: the operations in flight on a server (none when embedded)."""
from __future__ import annotations

from support.runner import run_without_engine as run
from unit.commands.fake_server import FakeServer

from ginkgodb.commands import CommandContext
from ginkgodb.commands.server_view import OpInfo


def _op(opid: int, cmd: dict) -> OpInfo:
    return OpInfo(opid=opid, connection_id=4, client="127.0.0.1:9", command=cmd,
                  ctx=CommandContext(engine=None), client_metadata={"driver": {"name": "t"}})


def test_current_op_lists_in_flight_operations():
    server = FakeServer([_op(11, {"find": "c", "filter": {}, "$db": "test"})])
    [entry] = run({"currentOp": 1}, server=server)["inprog"]
    assert entry["opid"] == 11 and entry["op"] == "query" and entry["ns"] == "test.c"
    assert entry["desc"] == "conn4" and entry["active"] is True
    assert entry["clientMetadata"] == {"driver": {"name": "t"}}


def test_current_op_filters_by_field():
    server = FakeServer([_op(1, {"find": "c", "$db": "t"}), _op(2, {"insert": "c", "$db": "t"})])
    assert [e["opid"] for e in run({"currentOp": 1, "op": "insert"}, server=server)["inprog"]] == [2]


def test_kill_op_marks_the_operation_killed():
    op = _op(5, {"aggregate": "c", "$db": "t"})
    server = FakeServer([op])
    assert run({"killOp": 1, "op": 5}, server=server) == {"info": "attempting to kill op", "ok": 1.0}
    assert op.ctx.killed and server.killed == [5]
    assert run({"killOp": 1}, server=server)["code"] == 2


def test_current_op_truncates_large_commands():
    server = FakeServer([_op(3, {"insert": "c", "documents": [{"pad": "x" * 100}] * 50, "$db": "t"})])
    [entry] = run({"currentOp": 1}, server=server)["inprog"]
    assert list(entry["command"]) == ["$truncated"] and len(entry["command"]["$truncated"]) <= 1024
    assert entry["ns"] == "t.c" and entry["op"] == "insert"


def test_embedded_current_op_is_empty():
    assert run({"currentOp": 1})["inprog"] == []
