"""Several processes on one data directory with the embedded client (issue 12, point 6).

Four spawned processes open the same directory with `MongoClient(path)` and, in phases separated
by a barrier, write and read the same collections: exact counts, a unique index enforced across
processes, an index created in one process planned by the others, a collection dropped in one
process gone in the others, and one TTL monitor among them. Further tests: awaitData (a change
stream) sees another process's commit, and a transaction loses to a write committed elsewhere.
docs/design/multiprocess.md describes the design.
"""
from __future__ import annotations

import datetime
import multiprocessing
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import pytest
from pymongo.errors import DuplicateKeyError, OperationFailure
from support.timing import bound

from ginkgodb import MongoClient

SPAWN = multiprocessing.get_context("spawn")
WORKERS = 4
PER_WORKER = 150
PHASE_TIMEOUT = 120


def _winning_stages(plan: dict) -> list[str]:
    stages = []
    while plan:
        stages.append(plan["stage"])
        plan = plan.get("inputStage") or {}
    return stages


def _phases(me: int, path: str, barrier, results) -> None:
    client = MongoClient(path)
    db = client.shared
    items = db.items
    report: dict = {"worker": me}

    def phase(name: str) -> None:
        barrier.wait(PHASE_TIMEOUT)
        report["phase"] = name

    # 1. everyone writes into one collection, created implicitly by whichever process is first,
    #    and reads what the others wrote
    phase("write")
    if me == 2:
        db.temp.insert_one({"_id": "doomed"})
    if me == 3:
        db.ttl.create_index("at", expireAfterSeconds=0)
    seen_others = 0
    for i in range(PER_WORKER):
        items.insert_one({"w": me, "i": i, "u": f"{me}-{i}"})
        if items.find_one({"w": (me + 1) % WORKERS, "i": i // 2}) is not None:
            seen_others += 1
    report["seen_others"] = seen_others

    # 2. exact counts, from every process
    phase("count")
    report["count"] = items.count_documents({})
    report["estimated"] = items.estimated_document_count()
    report["per_worker"] = [items.count_documents({"w": w}) for w in range(WORKERS)]

    # 3. a unique index made by one process, enforced for all
    phase("unique index")
    if me == 0:
        items.create_index("u", unique=True)
    phase("contested insert")
    try:
        items.insert_one({"u": "contested", "w": me, "i": -1})
        report["contested"] = "inserted"
    except DuplicateKeyError as exc:
        report["contested"] = exc.code
    try:
        items.insert_one({"u": f"{(me + 1) % WORKERS}-0", "w": me, "i": -2})  # another's value
        report["duplicate_of_other"] = "inserted"
    except DuplicateKeyError as exc:
        report["duplicate_of_other"] = exc.code

    # 4. an index created in one process, used by the others' queries
    phase("index")
    if me == 1:
        items.create_index("w")
    phase("query")
    plan = items.find({"w": 2}).explain()["queryPlanner"]["winningPlan"]
    report["plan"] = _winning_stages(plan)
    report["index_name"] = plan.get("inputStage", {}).get("indexName")
    report["w2"] = len(list(items.find({"w": 2, "i": {"$gte": 0}})))
    report["indexes"] = sorted(items.index_information())

    # 5. a collection dropped in one process is gone in the others
    phase("seen before drop")
    report["temp_before"] = db.temp.find_one({"_id": "doomed"}) is not None
    phase("drop")
    if me == 2:
        db.temp.drop()
    phase("after drop")
    report["temp_listed"] = "temp" in db.list_collection_names()
    report["temp_doc"] = db.temp.find_one({"_id": "doomed"})
    report["temp_count"] = db.temp.count_documents({})

    # 6. one TTL monitor among the processes, and it does expire documents
    phase("ttl")
    report["ttl_active"] = client._engine.ttl_monitor_active
    if me == 0:
        client.admin.command("setParameter", 1, ttlMonitorSleepSecs=1)
    if me == 3:
        db.ttl.insert_many([{"at": datetime.datetime(2000, 1, 1), "n": n} for n in range(5)])
    phase("ttl done")
    results.put(report)
    barrier.wait(PHASE_TIMEOUT)   # nobody closes (and gives up the lease) before all reported
    client.close()


def worker(me: int, path: str, barrier, results) -> None:
    try:
        _phases(me, path, barrier, results)
    except BaseException:
        results.put({"worker": me, "error": traceback.format_exc()})
        barrier.abort()


def test_four_processes_share_one_data_directory(tmp_path):
    path = str(tmp_path / "data")
    barrier = SPAWN.Barrier(WORKERS)
    results = SPAWN.Queue()
    procs = [SPAWN.Process(target=worker, args=(me, path, barrier, results)) for me in range(WORKERS)]
    for p in procs:
        p.start()
    try:
        reports = [results.get(timeout=PHASE_TIMEOUT * 3) for _ in procs]
    finally:
        for p in procs:
            p.join(PHASE_TIMEOUT)
            if p.is_alive():
                p.kill()
    errors = [r["error"] for r in reports if "error" in r]
    assert not errors, "\n".join(errors)
    reports.sort(key=lambda r: r["worker"])
    total = WORKERS * PER_WORKER
    for r in reports:
        assert r["count"] == total and r["estimated"] == total, r
        assert r["per_worker"] == [PER_WORKER] * WORKERS, r
        assert r["duplicate_of_other"] == 11000, r
        assert r["plan"] == ["FETCH", "IXSCAN"] and r["index_name"] == "w_1", r
        assert r["w2"] == PER_WORKER
        assert r["indexes"] == ["_id_", "u_1", "w_1"]
        assert r["temp_before"] is True
        assert (r["temp_listed"], r["temp_doc"], r["temp_count"]) == (False, None, 0), r
    assert sum(r["seen_others"] for r in reports) > 0   # reads did see the others' commits
    contested = sorted(str(r["contested"]) for r in reports)
    assert contested == ["11000", "11000", "11000", "inserted"], contested
    assert [r["ttl_active"] for r in reports].count(True) == 1
    assert all(p.exitcode == 0 for p in procs)

    client = MongoClient(path)   # all closed: the directory holds exactly what they did
    try:
        items = client.shared.items
        assert items.count_documents({}) == total + 1
        assert items.count_documents({"u": "contested"}) == 1
        deadline = time.monotonic() + 30   # the TTL monitor (now this process's) expires them
        client.admin.command("setParameter", 1, ttlMonitorSleepSecs=1)
        while client.shared.ttl.count_documents({}) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert client.shared.ttl.count_documents({}) == 0
        assert client._engine.ttl_monitor_active
    finally:
        client.admin.command("setParameter", 1, ttlMonitorSleepSecs=60)
        client.close()


# -- awaitData and transactions across processes ----------------------------------------------
def insert_one(path: str, doc: dict, delay: float = 0.0) -> None:
    client = MongoClient(path)
    try:
        time.sleep(delay)
        client.shared.events.insert_one(doc)
    finally:
        client.close()


def update_one(path: str, filt: dict, update: dict) -> int:
    client = MongoClient(path)
    try:
        return client.shared.accounts.update_one(filt, update).modified_count
    finally:
        client.close()


def _in_child(target, *args):
    with SPAWN.Pool(1) as pool:
        return pool.apply(target, args)


def test_a_change_stream_sees_another_process_commit(tmp_path):
    path = str(tmp_path / "data")
    client = MongoClient(path)
    try:
        events = client.shared.events
        events.insert_one({"_id": 0})
        with events.watch(max_await_time_ms=10_000) as stream:
            with SPAWN.Pool(1) as pool:
                pool.apply(time.sleep, (0,))   # the child is up
                pending = pool.apply_async(insert_one, (path, {"_id": 1, "by": "child"}, 1.0))
                start = time.monotonic()
                change = stream.try_next()     # waiting (up to 10 s) when the child commits
                waited = time.monotonic() - start
                pending.get(PHASE_TIMEOUT)
        assert change is not None and change["fullDocument"] == {"_id": 1, "by": "child"}
        assert waited < min(bound(6), 9.5)   # found by polling (every 50 ms), not at the 10 s await's end
    finally:
        client.close()


def test_a_transaction_loses_to_a_write_committed_by_another_process(tmp_path):
    path = str(tmp_path / "data")
    client = MongoClient(path)
    try:
        accounts = client.shared.accounts
        accounts.insert_many([{"_id": "a", "n": 0}, {"_id": "b", "n": 0}])
        with client.start_session() as s:
            s.start_transaction()
            accounts.update_one({"_id": "a"}, {"$inc": {"n": 1}}, session=s)
            assert _in_child(update_one, path, {"_id": "a"}, {"$inc": {"n": 10}}) == 1
            with pytest.raises(OperationFailure) as err:
                s.commit_transaction()
        assert err.value.code == 112 and err.value.has_error_label("TransientTransactionError")
        assert accounts.find_one({"_id": "a"})["n"] == 10   # the other process's write stands
        with client.start_session() as s:   # another process's commit elsewhere: no conflict
            s.start_transaction()
            accounts.update_one({"_id": "b"}, {"$inc": {"n": 1}}, session=s)
            assert _in_child(update_one, path, {"_id": "a"}, {"$inc": {"n": 10}}) == 1
            s.commit_transaction()
        assert [d["n"] for d in accounts.find().sort("_id", 1)] == [20, 1]
    finally:
        client.close()


def test_a_server_is_refused_a_directory_embedded_processes_share(tmp_path):
    path = str(tmp_path / "data")
    client = MongoClient(path)
    try:
        client.shared.items.insert_one({"_id": 1})
        root = str(Path(__file__).resolve().parents[3])
        proc = subprocess.run([sys.executable, "-c", "import sys; from ginkgodb.cli import main; sys.exit(main())",
                               "serve", "--port", "0", "--dbpath", path, "--quiet"],
                              env=dict(os.environ, PYTHONPATH=root), capture_output=True, text=True,
                              timeout=PHASE_TIMEOUT)
        assert proc.returncode == 100 and "DBPathInUse" in proc.stderr, proc.stderr
        assert client.shared.items.count_documents({}) == 1   # and the embedded process goes on
    finally:
        client.close()
