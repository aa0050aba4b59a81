"""Acknowledged writes survive kill -9, and data and indexes stay consistent."""
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

from ginkgodb.bsonutil.delta import apply_diff
from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.engine import Engine, layout
from ginkgodb.storage.kv import prefix_end

WRITER = os.path.join(os.path.dirname(__file__), "writer.py")
ROUNDS = 4


def _run_and_kill(path: str, start: int, rng: random.Random) -> int:
    """Start the writer, let it acknowledge for a random while, SIGKILL it; the last acked id."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, WRITER, path, str(start)], stdout=subprocess.PIPE, env=env,
                            text=True)
    acked = [start - 1]
    reader = threading.Thread(target=lambda: [acked.append(int(line)) for line in proc.stdout if line.strip()])
    reader.start()
    deadline = time.monotonic() + rng.uniform(0.3, 1.5)
    while time.monotonic() < deadline or acked[-1] < start:
        assert proc.poll() is None, f"writer died by itself with {proc.returncode}"
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    reader.join()
    return acked[-1]


def _check_consistent(path: str, acked: int) -> int:
    engine = Engine.open(path)
    try:
        ctx = CommandContext(engine=engine)
        state = engine.collection("crash", "c")
        ids = []
        with engine.kv.begin() as txn:
            docs = {layout.rid_of_record_key(k): bson.decode(v)
                    for k, v in txn.scan(state.record_prefix, prefix_end(state.record_prefix))}
            for ix in state.indexes:
                entries = [layout.rid_from_entry(k) for k, _ in txn.scan(ix.prefix, prefix_end(ix.prefix))]
                expected = sum(len(ix.keys(d)[0]) for d in docs.values())
                assert len(entries) == expected, f"index {ix.meta.name} has {len(entries)} entries, want {expected}"
                assert set(entries) <= set(docs), f"index {ix.meta.name} points at missing records"
        ids = sorted(d["_id"] for d in docs.values())
        assert ids == list(range(len(ids))), "documents are missing from the middle"
        assert len(ids) % 10 == 0, "a batch was half applied"
        assert ids[-1] >= acked, f"acknowledged id {acked} lost (have up to {ids[-1]})"
        counter = dispatch(ctx, {"find": "counter", "filter": {}, "$db": "crash"})["cursor"]["firstBatch"]
        n = bson.decode(counter[0].raw)["n"]
        assert n in (len(ids), len(ids) - 10), (n, len(ids))
        found = dispatch(ctx, {"find": "c", "filter": {"k": f"key{acked}"}, "$db": "crash"})
        assert len(found["cursor"]["firstBatch"]) == 1
        _check_oplog_agrees(engine, {"c": docs.values(), "counter": [bson.decode(counter[0].raw)]})
        return len(ids)
    finally:
        engine.close()


def _check_oplog_agrees(engine, collections: dict) -> None:
    """Replaying the oplog from its start gives exactly the stored documents: every change was
    logged in its own storage transaction, none lost, none extra (docs/design/oplog.md)."""
    oplog = engine.collection("local", "oplog.rs")
    replayed: dict = {name: {} for name in collections}
    last_ts = None
    with engine.kv.begin() as txn:
        for _, raw in txn.scan(oplog.record_prefix, prefix_end(oplog.record_prefix)):
            entry = bson.decode(raw)
            assert last_ts is None or entry["ts"] > last_ts, "oplog out of timestamp order"
            last_ts = entry["ts"]
            db, _, name = entry["ns"].partition(".")
            if db != "crash" or name not in replayed:
                continue
            docs = replayed[name]
            if entry["op"] == "i":
                docs[entry["o"]["_id"]] = entry["o"]
            elif entry["op"] == "u":
                key = entry["o2"]["_id"]
                o = entry["o"]
                docs[key] = apply_diff(docs[key], o["diff"]) if o.get("$v") == 2 else o
            elif entry["op"] == "d":
                docs.pop(entry["o"]["_id"], None)
    assert engine.clock.now() >= last_ts, "the clock restarted before the newest entry"
    for name, stored in collections.items():
        expected = {d["_id"]: d for d in stored}
        assert replayed[name] == expected, f"the oplog disagrees with crash.{name}"


@pytest.mark.slow
def test_acknowledged_writes_survive_kill9(tmp_path):
    rng = random.Random(int(os.environ.get("GINKGO_CRASH_SEED", time.time())))
    path = str(tmp_path / "data")
    start = 0
    for _ in range(ROUNDS):
        acked = _run_and_kill(path, start, rng)
        start = _check_consistent(path, acked)
