"""bench.memory: every phase's peaks, the data file's share, tracemalloc's figures when asked."""
from __future__ import annotations

import sys

import pytest

from bench.memory import measure, render

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status and smaps")


def test_a_small_run_reports_each_phase_split_into_heap_and_mapped_file(tmp_path):
    doc = measure(300, 42, ["W4"], 0.3, 3, str(tmp_path), trace="after-load")
    names = [p["name"] for p in doc["phases"]]
    assert names == ["open", "load (insert_many)", "create_index k, sku", "W4 find_one by _id"]
    load, build, w4 = doc["phases"][1:]
    assert load["status"] == "ok" and w4["status"].startswith("ok") and w4["rate"] > 0
    for p in doc["phases"]:
        assert p["peak_rss"] >= max(p["peak_anon"], p["peak_file"]) > 0
        assert p["peak_file"] >= p["peak_data_file"]
        assert p["peak_data_file_dirty"] <= p["peak_data_file"]   # pages written, not yet written back
    assert 0 < build["peak_data_file"]   # sampled resident pages; the file size is read once, at the end
    assert load["traced_peak"] is None and build["traced_peak"] >= build["traced_end"] > 0
    assert build["top_sites"] and doc["bson_bytes"] > 300 * 300
    assert "| create_index k, sku |" in render(doc) and list(tmp_path.iterdir()) == []
