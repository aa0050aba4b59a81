"""The benchmark's split of peak RSS into heap and mapped-file pages (bench/rss_sampler.py)."""
from __future__ import annotations

import mmap
import sys
import time

import pytest

from bench.rss_sampler import RssSampler

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")


def test_a_heap_spike_counts_as_anon_and_a_mapped_file_as_file(tmp_path):
    path = tmp_path / "mapped"
    path.write_bytes(b"\x01" * (32 << 20))
    with RssSampler() as before:
        pass
    with RssSampler() as rss, open(path, "rb") as f:
        spike = bytearray(64 << 20)            # touched pages: anonymous
        for i in range(0, len(spike), 4096):
            spike[i] = 1
        time.sleep(0.15)
        del spike
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            assert sum(m[i] for i in range(0, len(m), 4096)) == (32 << 20) // 4096
            time.sleep(0.15)
    assert rss.peak_anon - before.peak_anon >= 48 << 20          # the freed spike is still the peak
    assert rss.peak_file - before.peak_file >= 24 << 20
