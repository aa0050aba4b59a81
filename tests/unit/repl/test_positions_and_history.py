"""The majority commit point and write-concern waits (repl/positions.py), and the Jepsen-style
history checker the fault tests use (tests/support/history.py)."""
from __future__ import annotations

import threading
import time

from bson.timestamp import Timestamp
from support.history import History, check

from ginkgodb.repl import Positions, commit_point, majority_of


def ts(n: int) -> Timestamp:
    return Timestamp(1000, n)


def test_commit_point_is_the_majority_th_newest():
    assert majority_of(3) == 2 and majority_of(4) == 3 and majority_of(1) == 1
    assert commit_point([ts(5), ts(3), ts(9)], 2) == ts(5)
    assert commit_point([ts(5)], 2) == Timestamp(0, 0)


def test_w_majority_and_w_n_wait_for_positions():
    p = Positions()
    p.configure({0, 1, 2}, {0, 1, 2})
    p.update(0, ts(10))
    assert p.wait_for(ts(10), "majority", 0.05, lambda: True) == "timeout"
    threading.Timer(0.1, p.update, args=(2, ts(12))).start()
    started = time.monotonic()
    assert p.wait_for(ts(10), "majority", 5, lambda: True) == "ok"
    assert 0.05 < time.monotonic() - started < 2
    assert p.majority_point() == ts(10)
    assert p.wait_for(ts(10), 3, 0.05, lambda: True) == "timeout"
    p.update(1, ts(10))
    assert p.wait_for(ts(10), 3, 0.05, lambda: True) == "ok"
    p.update(1, ts(3))                      # positions never go back
    assert p.applied(1) == ts(10)
    assert p.wait_for(ts(99), "majority", None, lambda: False) == "stepped_down"


def test_history_checker_verdicts():
    h = History()
    for i, kind in enumerate(["ok", "ok", "info", "fail"]):
        h.record(0, "invoke", i)
        h.record(0, kind, i)
    good = check(h, {"a": {0, 1, 2}, "b": {0, 1}})
    assert good.valid and "no lost acknowledged write" in str(good)
    lost = check(h, {"a": {0}})
    assert not lost.valid and lost.lost == {"a": [1]}
    phantom = check(h, {"a": {0, 1, 3, 7}})
    assert phantom.phantoms == {"a": [3, 7]}       # a failed write, and one nobody wrote
    h.record(1, "ok", 42)
    assert check(h, {"a": {0, 1}}).malformed
