"""profile: the profiling level (0 only) and slowms."""
from __future__ import annotations

from support.runner import run_without_engine as run


def test_profile_reads_and_sets_slowms():
    from ginkgodb.commands.profile import PROFILE
    before = PROFILE.slowms
    try:
        assert run({"profile": -1, "$db": "test"}) == {"was": 0, "slowms": before, "sampleRate": 1.0, "ok": 1.0}
        assert run({"profile": 0, "slowms": 7, "$db": "test"})["slowms"] == before
        assert PROFILE.slowms == 7
        assert run({"profile": 1, "$db": "test"})["code"] == 238
        assert run({"profile": 0, "sampleRate": 2, "$db": "test"})["code"] == 2
    finally:
        PROFILE.slowms = before

