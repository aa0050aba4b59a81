"""bench/instruction_cost.py: the counted child runs, and the table of its figures."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench import instruction_cost

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _child(path: str, op: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench.instruction_cost", "--child", path, "--n", "300",
                           "--op", op, "--repeat", "20", "--pool", "20", *extra],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("op", instruction_cost.OPERATIONS)
def test_a_child_run_opens_the_data_set_and_runs_its_operation(tmp_path, op):
    path = str(tmp_path / "data")
    instruction_cost.build(path, 300)
    for stats in ("on", "off"):
        done = _child(path, op, "--stats", stats)
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("op", sorted(instruction_cost.WRITES))
def test_a_write_workload_runs_and_changes_the_data_set(tmp_path, op):
    import ginkgodb
    path = str(tmp_path / "data")
    instruction_cost.build(path, 300)
    done = _child(path, op)
    assert done.returncode == 0, done.stderr
    client = ginkgodb.MongoClient(path)
    db = client.db
    warm = instruction_cost.WARM_UP // instruction_cost.SCALE.get(op, 1)
    if op == "W2":
        assert db.singles.count_documents({}) == warm + 20
    elif op == "W1":
        assert db.singles.count_documents({}) == (warm + 20) * instruction_cost.BATCH
    elif op == "W8":
        assert sum(d.get("hits", 0) for d in db.c.find({}, {"hits": 1})) == warm + 20
    else:   # W12: k values 0..29 at n = 300, every one deleted
        assert db.c.count_documents({}) == 0
    client.close()


def test_a_child_run_imports_ginkgodb_from_the_named_checkout(tmp_path):
    path = str(tmp_path / "data")
    instruction_cost.build(path, 300)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _child(path, "W4", "--checkout", str(elsewhere))
    assert done.returncode != 0 and "not " + str(elsewhere) in done.stderr


def test_the_table_shows_what_the_statistics_add():
    text = instruction_cost.table({"W4": {"statistics on": 104.0, "statistics off": 100.0}}, 100_000)
    assert "| W4 find_one by `_id` | 104 | 100 | +4.00% |" in text
    assert "n = 100,000" in text


def test_the_baseline_table_shows_the_change_from_the_baseline():
    results = {"W2": {"baseline": 1_000.0, "now": 1_500.0, "now, oplog off": 1_200.0}}
    text = instruction_cost.table(results, 100_000, ("baseline", "now"), "now against baseline")
    assert "| operation | baseline | now | now, oplog off | now against baseline |" in text
    assert "| W2 insert_one | 1,000 | 1,500 | 1,200 | +50.00% |" in text


def test_the_baseline_variants_import_from_the_checkout_and_switch_the_oplog_off():
    base, now, off = instruction_cost.baseline_variants("somewhere")
    assert base.args() == ["--checkout", os.path.abspath("somewhere")] and now.args() == []
    assert off.env()["GINKGODB_OPLOG"] == "off" and now.env()["PYTHONHASHSEED"] == "0"
