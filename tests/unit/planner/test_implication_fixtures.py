"""planner.implication against fixtures/implication.yaml: mongod's isSubsetOf, case by case."""
from __future__ import annotations

import pytest
from unit.planner.fixture_data import params

from ginkgodb.planner.implication import filter_implies


def implies(case: dict) -> bool:
    """The one adapter between a fixture case and the implication test's API."""
    return filter_implies(case["filter"], case["partial"])


@pytest.mark.parametrize("case", params("implication"))
def test_implication(case):
    assert implies(case) is case["expect"]
