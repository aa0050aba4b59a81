"""Which filters get a bytes test (query/match/raw_prefilter.py), and what it rejects."""
from __future__ import annotations

import datetime

import bson
import pytest
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
])
def test_the_test_on_a_documents_bytes(filt, passes):
    test = compile_filter(filt).raw_prefilter
    assert test is not None
    assert bool(test(DOC)) is passes


@pytest.mark.parametrize("filt", [
    {}, {"n": 5}, {"n": {"$gt": 1}}, {"city": {"$ne": "Lille"}}, {"city": {"$nin": ["Lille"]}},
    {"city": {"$not": {"$eq": "Lille"}}}, {"$nor": [{"city": "Lille"}]}, {"city": {"$regex": "^L"}},
    {"city": None}, {"address": {"city": "Paris"}}, {"city": {"$in": ["Lyon", 5]}},
    {"$or": [{"city": "Lyon"}, {"n": 5}]}, {"$expr": {"$eq": ["$city", "Lille"]}}, {"tags": ["red", "blue"]},
    {"city": {"$exists": True}},
])
def test_filters_it_cannot_bound_get_no_test(filt):
    assert compile_filter(filt).raw_prefilter is None
    assert raw_prefilter(filt) is None
