"""A scan runs the filter's bytes test (query/match/raw_prefilter.py) before decoding, from its
PREFILTER_AFTER-th document on, and stops running it once it passes most documents
(engine/plan_stages.py, PREFILTER_KEPT_BELOW): the answers are the same either way, only the
decoding differs."""
from __future__ import annotations

import pytest

from ginkgodb import MongoClient
from ginkgodb.engine import plan_stages

N = 4096
HITS = sum(1 for i in range(N) if i % 100 == 0)   # the documents whose v is 7 and s "seven"
BEFORE = plan_stages.PREFILTER_AFTER - 1           # documents a scan decodes before it builds the test


def decoded(read_order, matches) -> int:
    """The decodes of a scan reading documents in `read_order` with a test that passes exactly
    `matches`: every document before the test is built, then only the matches."""
    return BEFORE + sum(1 for i in read_order[BEFORE:] if matches(i))


@pytest.fixture(params=["memory", "lmdb"])
def coll(request, tmp_path):
    client = MongoClient() if request.param == "memory" else MongoClient(str(tmp_path / "data"))
    c = client.db.c
    # v: 7 in one document of 100; w: 7 in nine of ten; s: the same as strings
    c.insert_many([{"_id": i, "v": 7 if i % 100 == 0 else i % 50 + 100, "w": 7 if i % 10 else 8,
                    "k": i % 4, "s": "seven" if i % 100 == 0 else "other"} for i in range(N)])
    c.create_index("k")
    yield c
    client.close()


@pytest.fixture
def decodes(monkeypatch):
    seen = []
    real = plan_stages._decode

    def decode(raw):
        seen.append(1)
        return real(raw)
    monkeypatch.setattr(plan_stages, "_decode", decode)
    return seen


def test_a_selective_number_is_found_on_the_bytes(coll, decodes):
    every = list(range(N))
    assert len(list(coll.find({"v": 7}))) == HITS
    assert len(decodes) == decoded(every, lambda i: i % 100 == 0)     # then only the matches
    decodes.clear()
    assert len(list(coll.find({"v": 7.0}))) == HITS   # a double finds the int32s
    assert len(decodes) == decoded(every, lambda i: i % 100 == 0)


def test_a_test_that_passes_most_documents_is_dropped(coll, decodes):
    got = len(list(coll.find({"w": 7})))
    assert got == sum(1 for i in range(N) if i % 10)
    # the test ran from the 64th document on, rejected one in ten (less than its cost: a
    # number's four searches), and the scan kept none after CALIBRATION documents: every later
    # document was decoded, and so were those before it and those it passed
    decodes.clear()
    list(coll.find({"w": 7}))
    chosen_at = plan_stages.PREFILTER_CHOSEN - 1
    assert len(decodes) == N - sum(1 for i in range(BEFORE, chosen_at) if i % 10 == 0)


def test_a_mixed_filter_keeps_the_groups_that_pay(coll, decodes):
    """A string the test finds in half the documents and a number it finds in one in a hundred:
    the scan keeps both (the string's search alone would decode half the collection)."""
    assert len(list(coll.find({"s": {"$in": ["seven", "other"]}, "v": 7}))) == HITS
    assert len(decodes) == decoded(list(range(N)), lambda i: i % 100 == 0)


def test_behind_an_index_the_residual_test_runs_too(coll, decodes):
    k0 = [i for i in range(N) if i % 4 == 0]   # what the index scan of k: 0 reads, in order
    assert len(list(coll.find({"k": 0, "s": "seven"}))) == HITS
    assert len(decodes) == decoded(k0, lambda i: i % 100 == 0)
    decodes.clear()
    assert len(list(coll.find({"k": 0, "v": 7}))) == HITS
    assert len(decodes) == decoded(k0, lambda i: i % 100 == 0)


def test_a_short_scan_builds_no_test(coll, decodes, monkeypatch):
    """Fewer documents than PREFILTER_AFTER: the test is never asked for (its expression is not
    compiled), every document read is decoded."""
    from ginkgodb.query.match import compiler
    asked = []
    real = compiler.Matcher.raw_prefilter
    monkeypatch.setattr(compiler.Matcher, "raw_prefilter", property(lambda m: asked.append(1) or real.fget(m)))
    assert len(list(coll.find({"_id": {"$lt": 40}, "v": 7}))) == 1
    assert asked == [] and len(decodes) == 40


def test_behind_an_index_a_test_that_passes_most_documents_is_dropped(coll, decodes):
    """The residual filter's test behind an index scan (FETCH) stops the same way, and the scan
    goes on answering: every document of k >= 0 is read, nine in ten pass `w: 7`."""
    assert len(list(coll.find({"k": {"$gte": 0}, "w": 7}))) == sum(1 for i in range(N) if i % 10)
    assert len(decodes) > N * 0.9
