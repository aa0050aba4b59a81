"""Helpers shared by the pipeline tests."""
from __future__ import annotations

from typing import Any

import pytest

from ginkgodb.errors import CommandError
from ginkgodb.query.pipeline import PipelineContext, run_pipeline


def run(stages: list, docs: list[dict] | None = None, collections: dict | None = None,
        variables: dict | None = None) -> list[dict]:
    colls = collections or {}
    ctx = PipelineContext(db="db", variables=variables or {},
                          source=lambda db, name, f: list(colls.get(name, [])))
    return list(run_pipeline(stages, list(docs or []), ctx))


def code_of(stages: list, docs: list[dict] | None = None, **kw: Any) -> int:
    with pytest.raises(CommandError) as info:
        run(stages, docs, **kw)
    return info.value.code
