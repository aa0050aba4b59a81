"""Test-only commands (sleep): they exist only with enableTestCommands, as in mongod."""
from __future__ import annotations

import threading
import time

import pytest

from ginkgodb.commands.server_parameters import PARAMETERS


@pytest.fixture
def test_commands():
    previous = PARAMETERS.value("enableTestCommands")
    PARAMETERS.set("enableTestCommands", True)
    yield
    PARAMETERS.set("enableTestCommands", previous)


def test_test_commands_do_not_exist_by_default(admin):
    err = admin.error({"sleep": 1, "millis": 1})
    assert (err["code"], err["codeName"], err["errmsg"]) == (59, "CommandNotFound", "no such command: 'sleep'")
    assert "sleep" not in admin({"listCommands": 1})["commands"]


def test_sleep_sleeps_when_test_commands_are_enabled(admin, test_commands):
    started = time.monotonic()
    assert admin({"sleep": 1, "millis": 120, "lock": "none"}) == {"ok": 1.0}
    assert time.monotonic() - started >= 0.12
    assert "sleep" in admin({"listCommands": 1})["commands"]


def test_sleep_is_admin_only_and_checks_its_fields(run, admin, test_commands):
    assert run.error({"sleep": 1, "millis": 1})["code"] == 13
    assert admin.error({"sleep": 1, "secs": 1, "seconds": 1})["code"] == 51153
    assert admin.error({"sleep": 1, "w": True, "lock": "w"})["code"] == 34346
    err = admin.error({"sleep": 1, "millis": 1, "lock": "x"})
    assert (err["code"], err["errmsg"]) == (2, "'lock' must be one of 'r', 'ir', 'w', 'iw', 'none'")


def test_sleep_stops_at_max_time_ms(admin, test_commands):
    started = time.monotonic()
    assert admin.error({"sleep": 1, "secs": 30, "lock": "none", "maxTimeMS": 100})["code"] == 50
    assert time.monotonic() - started < 5


def test_sleep_with_a_write_lock_holds_writers_back(engine, admin, test_commands):
    from support.runner import Runner
    writer = Runner(engine)
    finished: list[float] = []
    sleeper = threading.Thread(target=admin, args=({"sleep": 1, "millis": 300, "lock": "w"},))
    started = time.monotonic()
    sleeper.start()
    time.sleep(0.05)
    writer.insert("c", {})
    finished.append(time.monotonic() - started)
    sleeper.join()
    assert finished[0] >= 0.25
