"""A scan's choice among a filter's tests on bytes (engine/bytes_test_choice.py): the tests that
reject more documents than they cost, in decodes, the best ratio first."""
from __future__ import annotations

from ginkgodb.engine.bytes_test_choice import Choice
from ginkgodb.query.match.raw_prefilter import BytesTest, raw_prefilter


def _bytes_test(rejects: dict[str, float], costs: dict[str, float], calls: list) -> BytesTest:
    """Tests named by what they reject: a document `i` is rejected by `name` when i % 100 is
    below rejects[name] * 100; each call is recorded."""
    def make(name: str):
        def test(raw: bytes) -> bool:
            calls.append(name)
            return int(raw) % 100 >= rejects[name] * 100
        return test
    names = list(rejects)
    return BytesTest(tuple(make(n) for n in names), tuple(costs[n] for n in names))


def test_the_tests_that_pay_are_kept_best_ratio_first():
    calls: list = []
    bt = _bytes_test({"weak": 0.02, "strong": 0.9, "cheap": 0.3}, {"weak": 0.4, "strong": 0.4, "cheap": 0.03}, calls)
    choice = Choice(bt)
    for i in range(200):
        choice(str(i).encode())
    chosen = choice.chosen()
    calls.clear()
    assert chosen(b"95") and calls == ["cheap", "strong"]    # 0.03 / 0.3 before 0.4 / 0.9; weak dropped
    calls.clear()
    assert not chosen(b"10") and calls == ["cheap"]           # rejected by the first


def test_during_calibration_the_answer_is_the_whole_conjunction():
    calls: list = []
    choice = Choice(_bytes_test({"a": 0.5, "b": 0.1}, {"a": 0.1, "b": 0.1}, calls))
    assert choice(b"60") and not choice(b"20") and not choice(b"5")
    assert calls.count("a") == 3 and calls.count("b") == 3     # every test ran on every document


def test_nothing_is_kept_when_no_test_pays():
    choice = Choice(_bytes_test({"a": 0.05}, {"a": 0.4}, []))
    for i in range(100):
        choice(str(i).encode())
    assert choice.chosen() is None


def test_the_filters_groups_come_cheapest_first_with_their_costs():
    bt = raw_prefilter({"n": 5, "city": "Lyon", "when": {"$gt": 3}})
    assert bt is not None and len(bt.tests) == 3
    assert bt.costs == tuple(sorted(bt.costs)) and bt.costs[0] < 0.1   # the string's search first
