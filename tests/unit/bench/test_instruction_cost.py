"""bench/instruction_cost.py: the counted child runs, and the table of its figures."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench import instruction_cost

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.mark.parametrize("op", instruction_cost.OPERATIONS)
def test_a_child_run_opens_the_data_set_and_runs_its_operation(tmp_path, op):
    path = str(tmp_path / "data")
    instruction_cost.build(path, 300)
    for stats in ("on", "off"):
        done = subprocess.run([sys.executable, "-m", "bench.instruction_cost", "--child", path, "--n", "300",
                               "--op", op, "--stats", stats, "--repeat", "20"],
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr


def test_the_table_shows_what_the_statistics_add():
    text = instruction_cost.table({"W4": {"on": 104.0, "off": 100.0}}, 100_000)
    assert "| W4 | 104 | 100 | +4.00% |" in text
    assert "n = 100,000" in text


def test_the_instruction_total_is_read_from_valgrind_output():
    found = instruction_cost._IREFS.search("==1== \n==1== I   refs:      1,473,501,530\n")
    assert found is not None and found.group(1) == "1,473,501,530"
