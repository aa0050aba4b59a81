"""Committed transactions are wholly present after kill -9, uncommitted ones wholly absent."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time

import bson
import pytest

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.engine import Engine

WRITER = os.path.join(os.path.dirname(__file__), "txn_writer.py")
ROUNDS = 4


def _run_and_kill(path: str, start: int, rng: random.Random) -> int:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, WRITER, path, str(start)], stdout=subprocess.PIPE, env=env, text=True)
    acked = [start - 1]
    reader = threading.Thread(target=lambda: [acked.append(int(line)) for line in proc.stdout if line.strip()])
    reader.start()
    deadline = time.monotonic() + rng.uniform(0.5, 2.0)
    while time.monotonic() < deadline or acked[-1] < start:
        assert proc.poll() is None, f"writer died by itself with {proc.returncode}"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    reader.join()
    return acked[-1]


def _check(path: str, acked: int) -> int:
    engine = Engine.open(path)
    try:
        ctx = CommandContext(engine=engine)

        def docs(coll):
            reply = dispatch(ctx, {"find": coll, "filter": {}, "batchSize": 100000, "$db": "bank"})
            return [bson.decode(d.raw) for d in reply["cursor"]["firstBatch"]]

        accounts = docs("accounts")
        assert sum(a["balance"] for a in accounts) == 1000, "a transaction was half applied"
        ledger = sorted(d["_id"] for d in docs("ledger"))
        assert ledger == list(range(len(ledger))), "ledger entries of an uncommitted transaction survived"
        assert len(ledger) - 1 >= acked, f"acknowledged transaction {acked} is missing"
        moved_out = {i: 0 for i in range(10)}
        for d in docs("ledger"):
            moved_out[d["from"]] += 1
            moved_out[d["to"]] -= 1
        assert all(a["balance"] == 100 - moved_out[a["_id"]] for a in accounts), "ledger and balances disagree"
        assert dispatch(ctx, {"count": "ledger", "$db": "bank"})["n"] == len(ledger)
        return len(ledger)
    finally:
        engine.close()


@pytest.mark.slow
def test_transactions_are_all_or_nothing_across_kill9(tmp_path):
    rng = random.Random(int(os.environ.get("GINKGO_CRASH_SEED", time.time())))
    path = str(tmp_path / "data")
    start = 0
    for _ in range(ROUNDS):
        acked = _run_and_kill(path, start, rng)
        start = _check(path, acked)
    assert start > 0
