"""planner.choose against fixtures/choose.yaml: the plan mongod 7.0 would choose, case by case."""
from __future__ import annotations

import pytest
from unit.planner.fixture_data import index_meta, params

from ginkgodb.errors import CommandError
from ginkgodb.planner.choose import plan_query


def plan(case: dict) -> dict:
    """The one adapter between a fixture case and the planner's API: case in, outcome out."""
    indexes = [index_meta(i, spec) for i, spec in enumerate(case["indexes"])]
    sort = list(case["sort"].items()) if case.get("sort") else None
    try:
        winner, rejected = plan_query(indexes, case["filter"], sort, case.get("hint"))
    except CommandError as exc:
        return {"error": {"code": int(exc.code)}}
    scans = [{"index": s.index.name, "bounds": s.bounds.to_explain()} for s in winner.scans]
    if winner.kind == "IXSCAN":
        out = {**scans[0], "provides_sort": winner.provides_sort, "direction": winner.scans[0].direction}
    elif winner.kind == "OR":
        out = {"scans": scans}
    else:
        out = {"direction": winner.direction}
    labels = sorted(f"OR({', '.join(s.index.name for s in p.scans)})" if p.kind == "OR"
                    else f"{p.kind} {p.scans[0].index.name}" if p.scans else p.kind for p in rejected)
    return {"kind": winner.kind, **out, "rejected": labels}


_DEFAULTS = {"IXSCAN": {"provides_sort": False, "direction": 1}, "COLLSCAN": {"direction": 1}}


def expected(case: dict) -> dict:
    """The case's `expect` with the defaults the fixture file's header lists."""
    expect = dict(case["expect"])
    if "error" in expect:
        return expect
    return {**_DEFAULTS.get(expect["kind"], {}), **expect, "rejected": sorted(expect.get("rejected", []))}


@pytest.mark.parametrize("case", params("choose"))
def test_choose(case):
    assert plan(case) == expected(case)
