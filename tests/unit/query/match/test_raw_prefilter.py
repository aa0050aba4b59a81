"""Which filters get a bytes test (query/match/raw_prefilter.py), and what it rejects."""
from __future__ import annotations

import datetime

import bson
import pytest
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.objectid import ObjectId

from ginkgodb.query.match import compile_filter
from ginkgodb.query.match.raw_prefilter import raw_prefilter

OID = ObjectId("65a1b2c3d4e5f60718293a4b")
DAY = datetime.datetime(2024, 5, 17, 12, 30)
DOC = bson.encode({"_id": OID, "city": "Lyon", "tags": ["red", "blue"], "when": DAY,
                   "address": {"city": "Paris"}, "items": [{"code": "I1", "qty": 3}], "n": 5})


@pytest.mark.parametrize("filt, passes", [
    ({"city": "Lyon"}, True),
    ({"city": "Lille"}, False),
    ({"city": {"$eq": "Lille"}}, False),
    ({"address.city": {"$in": ["Rome", "Paris"]}}, True),
    ({"address.city": {"$in": ["Rome", "Oslo"]}}, False),
    ({"tags": "blue"}, True),                                 # an array's element: the same bytes
    ({"tags": {"$all": ["red", "green"]}}, False),
    ({"items": {"$elemMatch": {"code": "I2", "qty": {"$gt": 1}}}}, False),
    ({"_id": OID}, True),
    ({"_id": ObjectId("65a1b2c3d4e5f60718293a4c")}, False),
    ({"when": DAY}, True),
    ({"when": DAY + datetime.timedelta(milliseconds=1)}, False),
    ({"$or": [{"city": "Rome"}, {"tags": "green"}]}, False),
    ({"$or": [{"city": "Rome"}, {"tags": "red"}]}, True),
    ({"$and": [{"city": "Lyon"}, {"tags": "green"}]}, False),
    ({"city": "Lyon", "address.city": "Oslo"}, False),
    # numbers, looked for with their type byte and the holding element's name
    ({"n": 5}, True),
    ({"n": 5.0}, True),                                       # a double equal to the stored int32
    ({"n": Int64(5)}, True),
    ({"n": 6}, False),
    ({"n": {"$in": [4, 6]}}, False),
    ({"n": {"$in": [4, 5.0]}}, True),
    ({"items.qty": 3}, True),
    ({"items.qty": 7}, False),
    ({"items.qty": 5}, False),       # a 5 is there, named n
    ({"items": {"$elemMatch": {"qty": 4}}}, False),
    ({"items": {"$elemMatch": {"code": "I1", "qty": 4}}}, False),   # every group (a scan may keep fewer)
    ({"city": {"$in": ["Lyon", 5]}}, True),
    ({"$or": [{"city": "Rome"}, {"n": 5}]}, True),
    ({"$or": [{"city": "Rome"}, {"n": 4}]}, False),
    ({"flag": True}, False),
    # ranges on numbers and dates: the element's value inside the range, in any type
    ({"n": {"$gt": 4}}, True),
    ({"n": {"$gt": 5}}, False),
    ({"n": {"$gte": 5, "$lt": 6}}, True),
    ({"n": {"$lte": 4.5}}, False),
    ({"items.qty": {"$gte": 3}}, True),
    ({"items.qty": {"$gt": 3}}, False),
    ({"when": {"$gt": DAY}}, False),
    ({"when": {"$gte": DAY}}, True),
    ({"when": {"$lt": DAY + datetime.timedelta(milliseconds=1)}}, True),
    ({"$or": [{"city": "Lyon"}, {"n": {"$gt": 5}}]}, True),
    ({"$or": [{"city": "Rome"}, {"n": {"$gt": 5}}]}, False),
    ({"city": {"$lt": "Lyon"}}, False),          # "Paris" (address.city) is above it
    ({"city": {"$lte": "Lyon"}}, True),
    ({"tags": {"$gt": "r"}}, True),
    ({"tags": {"$gt": "s"}}, False),
    ({"n": {"$in": list(range(100, 140))}}, False),   # 40 numbers: four searches of 40 values
    ({"n": {"$in": list(range(100, 139)) + [5]}}, True),
    ({"when": {"$exists": True}}, True),
    ({"address.city": {"$exists": 1}}, True),
    ({"flag": {"$exists": True}}, False),                  # no element named flag
])
def test_the_test_on_a_documents_bytes(filt, passes):
    test = compile_filter(filt).raw_prefilter
    assert test is not None
    assert bool(test(DOC)) is passes


@pytest.mark.parametrize("filt", [
    {}, {"n": {"$gt": [1]}}, {"n": {"$gt": "a\x00"}}, {"n": {"$lt": float("nan")}}, {"n": float("nan")}, {"n": Decimal128("5")}, {"city": {"$ne": "Lille"}}, {"city": {"$nin": ["Lille"]}},
    {"city": {"$not": {"$eq": "Lille"}}}, {"$nor": [{"city": "Lille"}]}, {"city": {"$regex": "^L"}},
    {"city": None}, {"address": {"city": "Paris"}}, {"city": {"$in": ["Lyon", None]}},
    {"$or": [{"city": "Lyon"}, {"n": {"$ne": 5}}]}, {"$expr": {"$eq": ["$city", "Lille"]}}, {"tags": ["red", "blue"]},
    {"city": {"$exists": False}}, {"city": {"$exists": 0}}, {"city": {"$in": [f"c{i}" for i in range(65)]}},
    {"n": {"$in": list(range(65))}},
])
def test_filters_it_cannot_bound_get_no_test(filt):
    assert compile_filter(filt).raw_prefilter is None
    assert raw_prefilter(filt) is None


@pytest.mark.parametrize("stored", [5, Int64(5), 5.0, Decimal128("5"), Decimal128("5.000"), [1, 5]])
def test_every_encoding_of_a_number_passes(stored):
    """int32, int64, double and decimal128 (in any form) of the same number pass an equality to
    it; an array holding it passes through its element's index name."""
    raw = bson.encode({"n": stored})
    for value in (5, 5.0, Int64(5)):
        assert compile_filter({"n": value}).raw_prefilter(raw)


@pytest.mark.parametrize("value, stored, passes", [
    (0, -0.0, True), (0.0, 0, True), (-0.0, Int64(0), True),
    (2**53 + 1, float(2**53), False),      # no double equals 2^53 + 1: only its int64 is looked for
    (2**53 + 1, Int64(2**53 + 1), True),
    (float(2**53), Int64(2**53), True),
    (float("inf"), float("inf"), True), (float("inf"), 2**62, False),
    (1e300, 1e300, True), (2**70, 2**62, False),
    (True, True, True), (True, 1, False), (False, False, True), (False, 0, False),
])
def test_numbers_and_booleans_on_their_edges(value, stored, passes):
    test = raw_prefilter({"v": value})
    assert test is not None
    raw = bson.encode({"v": stored})
    assert bool(test(raw)) is passes
    if passes is False:   # what the filter itself answers: the test rejects only non-matches
        assert not compile_filter({"v": value})(bson.decode(raw))
