"""Shared fixtures: every storage-level and engine-level test runs on both engines."""
from __future__ import annotations

import os

# Before ginkgodb is imported: each LMDB data directory a test makes keeps 1 MiB of disk
# preallocated instead of 16 (the suite makes thousands; the disk-full tests set their own).
os.environ.setdefault("GINKGODB_DISK_RESERVE_MB", "1")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from support.engines import ENGINES, make_kv  # noqa: E402

# Property tests judge results, not speed: on a shared, loaded machine generating inputs or one
# example may take long (a test's own @settings still sets what it names).
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


@pytest.fixture(params=ENGINES)
def kv(request, tmp_path):
    engine = make_kv(request.param, tmp_path)
    yield engine
    engine.close()


@pytest.fixture(params=ENGINES)
def engine(request, tmp_path):
    from ginkgodb.engine import Engine
    eng = Engine(make_kv(request.param, tmp_path))
    yield eng
    eng.close()
