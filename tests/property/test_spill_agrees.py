"""A sort or $group that spills to disk returns exactly what the same stage returns in memory:
the same documents, the same values (sums added in the same order), and for sorts the same order,
ties included."""
from __future__ import annotations

import contextlib
import tempfile

import bson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.engines import ENGINES, fresh_engine

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.query.external_sort import Spill
from ginkgodb.query.knobs import KNOBS
from ginkgodb.query.pipeline import PipelineContext, run_pipeline

scalars = st.one_of(st.none(), st.integers(-4, 4), st.floats(-4, 4, allow_nan=False), st.booleans(),
                    st.sampled_from(["", "a", "ab", "b", "B"]))
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.fixed_dictionaries({"x": scalars}))
docs = st.lists(st.fixed_dictionaries({"v": st.floats(-1e6, 1e6, allow_nan=False)},
                                      optional={"k": values, "g": scalars, "h": values}),
                max_size=60).map(lambda ds: [{"_id": i, **d} for i, d in enumerate(ds)])
sort_specs = st.dictionaries(st.sampled_from(["k", "g", "h", "v", "k.x"]), st.sampled_from([1, -1]),
                             min_size=1, max_size=3)
group_ids = st.sampled_from(["$g", "$k", {"a": "$g", "b": "$h"}, None, {"$mod": ["$_id", 3]}])
ACCUMULATORS = {"n": {"$sum": 1}, "s": {"$sum": "$v"}, "avg": {"$avg": "$v"}, "p": {"$push": "$k"},
                "f": {"$first": "$k"}, "l": {"$last": "$h"}, "a": {"$addToSet": "$k"}, "mx": {"$max": "$h"},
                "mn": {"$min": "$v"}, "top": {"$topN": {"n": 2, "sortBy": {"v": 1}, "output": "$_id"}}}


@contextlib.contextmanager
def limits(sort_bytes: int, group_bytes: int):
    saved = KNOBS.max_blocking_sort_bytes, KNOBS.group_max_memory_bytes
    KNOBS.max_blocking_sort_bytes, KNOBS.group_max_memory_bytes = sort_bytes, group_bytes
    try:
        yield
    finally:
        KNOBS.max_blocking_sort_bytes, KNOBS.group_max_memory_bytes = saved


def _run(stages: list, documents: list, spill: Spill) -> list:
    return list(run_pipeline(stages, iter(documents), PipelineContext(spill=spill)))


def _canonical(doc: dict) -> bytes:
    return bson.encode({"_id": doc["_id"]})


@settings(max_examples=150, deadline=None)
@given(documents=docs, spec=sort_specs)
def test_spilled_sort_equals_in_memory_sort(documents, spec):
    stages = [{"$sort": spec}]
    try:
        expected = _run(stages, documents, Spill(False))
    except Exception as exc:  # parallel arrays and the like: the spilled sort must fail alike
        with limits(150, 150), tempfile.TemporaryDirectory() as tmp, pytest.raises(type(exc)):
            _run(stages, documents, Spill(True, tmp))
        return
    with limits(150, 150), tempfile.TemporaryDirectory() as tmp:
        assert _run(stages, documents, Spill(True, tmp)) == expected


@settings(max_examples=150, deadline=None)
@given(documents=docs, gid=group_ids)
def test_spilled_group_equals_in_memory_group(documents, gid):
    stages = [{"$group": {"_id": gid, **ACCUMULATORS}}]
    expected = sorted(_run(stages, documents, Spill(False)), key=_canonical)
    with limits(150, 300), tempfile.TemporaryDirectory() as tmp:
        assert sorted(_run(stages, documents, Spill(True, tmp)), key=_canonical) == expected


@pytest.mark.parametrize("kind", ENGINES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(documents=docs, spec=sort_specs)
def test_spilled_find_sort_equals_in_memory_find_sort(tmp_path, kind, documents, spec):
    with fresh_engine(kind, tmp_path) as engine:
        ctx = CommandContext(engine=engine)
        if documents:
            dispatch(ctx, {"insert": "c", "documents": documents, "$db": "t"})

        def find(allow: bool) -> dict:
            return dispatch(ctx, {"find": "c", "sort": spec, "batchSize": 1000, "allowDiskUse": allow, "$db": "t"})
        expected = find(False)
        with limits(150, 150):
            got = find(True)
        if expected["ok"] != 1.0:
            assert got["code"] == expected["code"]
            return
        assert [bson.decode(d.raw) for d in got["cursor"]["firstBatch"]] == \
            [bson.decode(d.raw) for d in expected["cursor"]["firstBatch"]]
