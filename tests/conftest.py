"""Shared fixtures: every storage-level and engine-level test runs on both engines."""
from __future__ import annotations

import pytest
from support.engines import ENGINES, make_kv


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
