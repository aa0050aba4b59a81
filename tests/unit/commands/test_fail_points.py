"""configureFailPoint and the failCommand fail point (and its siblings) through dispatch."""
from __future__ import annotations

import time

import pytest
from support.runner import Runner
from unit.commands.fake_server import FakeServer

from ginkgodb.commands import CLOSE_CONNECTION, PARAMETERS, CommandContext, dispatch
from ginkgodb.commands.fail_points import FAIL_POINTS


@pytest.fixture
def test_commands():
    param = PARAMETERS.param("enableTestCommands")
    param.value = True
    yield
    param.value = False
    FAIL_POINTS.reset()


@pytest.fixture
def fp(engine, test_commands):
    admin = Runner(engine, db="admin")

    def configure(mode, data=None, name="failCommand"):
        cmd = {"configureFailPoint": name, "mode": mode}
        if data is not None:
            cmd["data"] = data
        return admin(cmd)
    return configure


def test_without_test_commands_configure_fail_point_does_not_exist(admin):
    reply = admin.error({"configureFailPoint": "failCommand", "mode": "alwaysOn"})
    assert (reply["code"], reply["codeName"], reply["errmsg"]) == (
        59, "CommandNotFound", "no such command: 'configureFailPoint'")


def test_enable_test_commands_is_set_only_at_startup(admin):
    reply = admin.error({"setParameter": 1, "enableTestCommands": 1})
    assert reply["errmsg"] == "not allowed to change [enableTestCommands] at runtime"
    assert admin({"getParameter": 1, "enableTestCommands": 1})["enableTestCommands"] is False


def test_error_code_with_labels_for_the_named_commands_only(fp, run):
    assert fp("alwaysOn", {"failCommands": ["insert"], "errorCode": 91, "errorLabels": ["RetryableWriteError"]}) == {
        "count": 0, "ok": 1.0}
    reply = run.error({"insert": "c", "documents": [{}]})
    assert reply == {"ok": 0.0, "errmsg": "Failing command via 'failCommand' failpoint", "code": 91,
                     "codeName": "ShutdownInProgress", "errorLabels": ["RetryableWriteError"]}
    run({"find": "c"})
    assert run.error({"insert": "c", "documents": [{}]})["code"] == 91
    assert run({"count": "c"})["n"] == 0  # nothing was inserted
    assert fp("off")["count"] == 2          # it fired twice
    run.insert("c", {})


def test_times_fires_that_many_times_then_turns_off(fp, run):
    fp({"times": 2}, {"failCommands": ["find"], "errorCode": 11600})
    assert run.error({"find": "c"})["codeName"] == "InterruptedAtShutdown"
    assert run.error({"find": "c"})["code"] == 11600
    run({"find": "c"})


def test_skip_lets_the_first_ones_through(fp, run):
    fp({"skip": 1}, {"failCommands": ["ping"], "errorCode": 2})
    run({"ping": 1})
    assert run.error({"ping": 1})["code"] == 2
    assert run.error({"ping": 1})["code"] == 2


def test_activation_probability_zero_never_fires(fp, run):
    fp({"activationProbability": 0.0}, {"failCommands": ["ping"], "errorCode": 2})
    for _ in range(20):
        run({"ping": 1})


def test_custom_errmsg_and_an_unnamed_code(fp, run):
    fp("alwaysOn", {"failCommands": ["find"], "errorCode": 40573, "errmsg": "made up"})
    reply = run.error({"find": "c"})
    assert (reply["code"], reply["codeName"], reply["errmsg"]) == (40573, "Location40573", "made up")


def test_app_name_matches_the_clients_metadata(fp, engine):
    fp("alwaysOn", {"failCommands": ["find"], "errorCode": 2, "appName": "tests"})
    mine = CommandContext(engine=engine, client_metadata={"application": {"name": "tests"}})
    other = CommandContext(engine=engine, client_metadata={"application": {"name": "else"}})
    assert dispatch(mine, {"find": "c", "$db": "t"})["code"] == 2
    assert dispatch(other, {"find": "c", "$db": "t"})["ok"] == 1.0
    assert dispatch(CommandContext(engine=engine), {"find": "c", "$db": "t"})["ok"] == 1.0


@pytest.mark.parametrize("internal", [False, True])
def test_another_members_connections_are_spared_unless_fail_internal_commands(fp, engine, internal):
    """mongod's failCommand skips internal clients: a secondary's oplog tailing must not spend a
    one-shot getMore fail point meant for a client's change stream."""
    from ginkgodb.repl.app_names import OPLOG_SYNC
    fp({"times": 1}, {"failCommands": ["find"], "errorCode": 2, **({"failInternalCommands": True} if internal else {})})
    member = CommandContext(engine=engine, client_metadata={"application": {"name": OPLOG_SYNC}})
    client = CommandContext(engine=engine)
    assert dispatch(member, {"find": "c", "$db": "t"}).get("code") == (2 if internal else None)
    assert dispatch(client, {"find": "c", "$db": "t"}).get("code") == (None if internal else 2)


def test_namespace_narrows_the_commands(fp, run):
    fp("alwaysOn", {"failCommands": ["find"], "errorCode": 2, "namespace": "test.a"})
    assert run.error({"find": "a"})["code"] == 2
    run({"find": "b"})


def test_write_concern_error_is_added_to_a_command_that_ran(fp, run):
    fp({"times": 1}, {"failCommands": ["insert"], "writeConcernError": {"code": 91, "errmsg": "Replication is "
                                                                        "being shut down"}})
    reply = run.insert("c", {"_id": 1})
    assert reply["n"] == 1
    assert reply["writeConcernError"] == {"code": 91, "errmsg": "Replication is being shut down",
                                          "codeName": "ShutdownInProgress"}
    assert "writeConcernError" not in run.insert("c", {"_id": 2})


def test_write_concern_error_with_labels(fp, run):
    fp({"times": 1}, {"failCommands": ["insert"], "errorLabels": ["RetryableWriteError"],
                      "writeConcernError": {"code": 64, "errmsg": "waiting"}})
    reply = run.insert("c", {})
    assert reply["errorLabels"] == ["RetryableWriteError"]
    assert reply["writeConcernError"]["codeName"] == "WriteConcernFailed"


def test_block_connection_delays_then_runs_the_command(fp, run):
    fp({"times": 1}, {"failCommands": ["find"], "blockConnection": True, "blockTimeMS": 200})
    started = time.monotonic()
    run({"find": "c"})
    assert time.monotonic() - started >= 0.19
    started = time.monotonic()
    run({"find": "c"})
    assert time.monotonic() - started < 0.19


def test_block_connection_then_error(fp, run):
    fp({"times": 1}, {"failCommands": ["find"], "blockConnection": True, "blockTimeMS": 50, "errorCode": 89})
    assert run.error({"find": "c"})["codeName"] == "NetworkTimeout"


def test_block_connection_needs_block_time(fp, run):
    fp("alwaysOn", {"failCommands": ["find"], "blockConnection": True})
    assert run.error({"find": "c"})["code"] == 72


def test_close_connection_over_the_wire_asks_the_server_to_close(fp, engine):
    fp({"times": 1}, {"failCommands": ["insert"], "closeConnection": True})
    ctx = CommandContext(engine=engine, server=FakeServer())
    dispatch(ctx, {"insert": "c", "documents": [{}], "$db": "t"})
    assert ctx.extra.pop(CLOSE_CONNECTION) is True
    assert dispatch(ctx, {"count": "c", "$db": "t"})["n"] == 0  # the command did not run


def test_close_connection_embedded_answers_host_unreachable(fp, run):
    fp({"times": 1}, {"failCommands": ["insert"], "closeConnection": True})
    reply = run.error({"insert": "c", "documents": [{}]})
    assert (reply["code"], reply["codeName"]) == (6, "HostUnreachable")
    assert run({"count": "c"})["n"] == 0


def test_configure_fail_point_itself_is_never_failed(fp):
    fp("alwaysOn", {"failCommands": ["configureFailPoint"], "errorCode": 2})
    assert fp("off")["ok"] == 1.0


def test_fail_get_more_after_cursor_checkout(fp, run):
    run.insert("c", *({"i": i} for i in range(5)))
    cursor = run({"find": "c", "batchSize": 1})["cursor"]["id"]
    fp({"times": 1}, {"errorCode": 7, "closeConnection": False}, name="failGetMoreAfterCursorCheckout")
    assert run.error({"getMore": cursor, "collection": "c"})["codeName"] == "HostNotFound"


def test_on_primary_transactional_write_fails_before_commit(fp, engine):
    fp({"times": 2}, {"failBeforeCommitExceptionCode": 1, "closeConnection": False},
       name="onPrimaryTransactionalWrite")
    from ginkgodb.commands.fail_points import fail_before
    ctx = CommandContext(engine=engine)
    with pytest.raises(Exception) as raised:
        fail_before(ctx, "insert", {"insert": "c", "txnNumber": 1, "$db": "t"})
    assert getattr(raised.value, "code", None) == 1
    fp({"times": 1}, {"failBeforeCommitExceptionCode": 1}, name="onPrimaryTransactionalWrite")
    with pytest.raises(Exception) as raised:  # and by default the connection closes as well
        fail_before(ctx, "insert", {"insert": "c", "txnNumber": 2, "$db": "t"})
    assert getattr(raised.value, "code", None) == 6  # the embedded client has no connection: 6
    assert fail_before(ctx, "insert", {"insert": "c", "txnNumber": 3, "$db": "t"}) is None  # times: 1


@pytest.mark.parametrize("cmd, code, message", [
    ({"configureFailPoint": "noSuchPoint", "mode": "alwaysOn"}, 266, "noSuchPoint not found"),
    ({"configureFailPoint": "failCommand", "mode": "sometimes"}, 2, "unknown mode: sometimes"),
    ({"configureFailPoint": "failCommand", "mode": {"times": -1}}, 2, "'times' option to 'mode' must be positive"),
    ({"configureFailPoint": "failCommand", "mode": {"activationProbability": 2}}, 2,
     "'activationProbability' option to 'mode' must be a double between 0 and 1"),
    ({"configureFailPoint": "failCommand"}, 40414,
     "BSON field 'configureFailPoint.mode' is missing but a required field"),
    ({"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": 5}, 14, "the 'data' field must be an object"),
    ({"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["find"], "threadName": "x"}},
     238, "fail point failCommand with 'threadName' is not supported by ginkgodb"),
])
def test_bad_configurations(engine, test_commands, cmd, code, message):
    reply = Runner(engine, db="admin").error(cmd)
    assert (reply["code"], reply["errmsg"]) == (code, message)


def test_configure_fail_point_runs_against_admin_only(engine, test_commands):
    assert Runner(engine).error({"configureFailPoint": "failCommand", "mode": "off"})["code"] == 13


def test_fail_get_more_after_cursor_checkout_spares_another_members_oplog_tailing(fp, engine, run):
    """On a set of three, a secondary's getMore on the oplog must not spend the one-shot fail
    point a test set for its change stream (the members' connections are internal clients)."""
    from ginkgodb.repl.app_names import OPLOG_SYNC
    run.insert("c", *({"i": i} for i in range(5)))
    member = CommandContext(engine=engine, client_metadata={"application": {"name": OPLOG_SYNC}})
    cursor = dispatch(member, {"find": "c", "batchSize": 1, "$db": "test"})["cursor"]["id"]
    fp({"times": 1}, {"errorCode": 7, "closeConnection": False}, name="failGetMoreAfterCursorCheckout")
    assert dispatch(member, {"getMore": cursor, "collection": "c", "$db": "test"})["ok"] == 1.0
    cursor = run({"find": "c", "batchSize": 1})["cursor"]["id"]
    assert run.error({"getMore": cursor, "collection": "c"})["codeName"] == "HostNotFound"
