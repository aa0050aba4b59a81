"""A primary's wait for `w: majority` and `w: N` (commands/replicated_member.py): a write the
member committed as primary is not acknowledged as replicated once it is no longer primary, or
its term changed, as mongod's awaitReplication answers (189 PrimarySteppedDown)."""
from __future__ import annotations

import threading
import time

import pytest
from support.members import offline_member

from ginkgodb.commands.replica_set import MemberState

ME = "127.0.0.1:27017"
CONFIG = {"_id": "rs0", "version": 1, "members": [{"_id": 0, "host": ME}, {"_id": 1, "host": "127.0.0.1:27018"},
                                                  {"_id": 2, "host": "127.0.0.1:27019"}]}
DONE = {"ok": 1.0, "n": 1}


@pytest.fixture
def member():
    with offline_member(CONFIG, ME) as m:
        m.state = MemberState.PRIMARY
        yield m


def _insert(wc=None, db="test") -> dict:
    cmd = {"insert": "c", "documents": [{"_id": 1}], "$db": db}
    if wc is not None:
        cmd["writeConcern"] = wc
    return cmd


def test_a_member_that_stepped_down_after_the_write_does_not_acknowledge_it(member):
    member.state = MemberState.SECONDARY
    for wc in ({"w": "majority"}, None, {"w": 2, "wtimeout": 100}):
        reply = dict(DONE)
        assert member.wait_for_replication(_insert(wc), reply)
        error = reply["writeConcernError"]
        assert (error["code"], error["codeName"]) == (189, "PrimarySteppedDown")
        assert error["errmsg"] == "Primary stepped down while waiting for replication"
        assert error["errInfo"]["writeConcern"]["provenance"] == ("implicitDefault" if wc is None else "clientSupplied")


def test_w_1_a_failed_write_and_the_local_database_do_not_wait(member):
    member.state = MemberState.SECONDARY
    for cmd, reply in ((_insert({"w": 1}), dict(DONE)), (_insert(db="local"), dict(DONE)),
                       (_insert(), {"ok": 0.0, "code": 11000})):
        assert member.wait_for_replication(cmd, reply)
        assert "writeConcernError" not in reply


def test_a_new_term_during_the_wait_is_a_step_down(member):
    def elected_again() -> None:
        time.sleep(0.3)
        member.term += 1          # another election came and went: the write may be gone
    threading.Thread(target=elected_again, daemon=True).start()
    started = time.monotonic()
    reply = dict(DONE)
    member.wait_for_replication(_insert({"w": "majority", "wtimeout": 5000}), reply)
    assert reply["writeConcernError"]["code"] == 189
    assert time.monotonic() - started < 3


def test_a_primary_that_stays_waits_until_the_timeout(member):
    reply = dict(DONE)
    member.wait_for_replication(_insert({"w": "majority", "wtimeout": 200}), reply)
    error = reply["writeConcernError"]
    assert (error["code"], error["errInfo"]["wtimeout"]) == (64, True)
