"""Geo operators end to end through the commands: $geoWithin/$geoIntersects with and without
geo indexes, 2dsphere/2d index creation and validation, $near/$nearSphere and $geoNear."""
from __future__ import annotations

import math

import bson
import pytest

from ginkgodb.commands import CommandContext, dispatch


def run(engine, cmd):
    return dispatch(CommandContext(engine=engine), {**cmd, "$db": "db"})


def ok(engine, cmd):
    reply = run(engine, cmd)
    assert reply["ok"] == 1, reply
    return reply


def find(engine, filt, **extra):
    reply = ok(engine, {"find": "c", "filter": filt, "batchSize": 10_000, **extra})
    return [plain(d) for d in reply["cursor"]["firstBatch"]]


def plain(doc):
    return bson.decode(doc.raw) if hasattr(doc, "raw") else doc


def ids(docs):
    return sorted(d["_id"] for d in docs)


def point(lng, lat):
    return {"type": "Point", "coordinates": [lng, lat]}


SQUARE = {"type": "Polygon", "coordinates": [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]]}

DOCS = [
    {"_id": 1, "loc": point(5, 5)},
    {"_id": 2, "loc": point(20, 20)},
    {"_id": 3, "loc": [3, 4]},                                        # legacy pair
    {"_id": 4, "loc": {"type": "LineString", "coordinates": [[-5, 5], [5, 5]]}},
    {"_id": 5, "loc": {"type": "Polygon", "coordinates": [[[1, 1], [2, 1], [2, 2], [1, 2], [1, 1]]]}},
    {"_id": 6, "other": 1},
    {"_id": 7, "loc": "not geo"},
]


def insert(engine, docs=DOCS):
    ok(engine, {"insert": "c", "documents": docs})


def create(engine, key, **options):
    return run(engine, {"createIndexes": "c", "indexes": [{"key": key, "name": "geo", **options}]})


def create_ok(engine, key, **options):
    reply = create(engine, key, **options)
    assert reply["ok"] == 1, reply


WITHIN_SQUARE = {"loc": {"$geoWithin": {"$geometry": SQUARE}}}
INTERSECTS_SQUARE = {"loc": {"$geoIntersects": {"$geometry": SQUARE}}}


def test_geo_within_and_intersects_without_an_index(engine):
    insert(engine)
    assert ids(find(engine, WITHIN_SQUARE)) == [1, 3, 5]
    assert ids(find(engine, INTERSECTS_SQUARE)) == [1, 3, 4, 5]
    assert ids(find(engine, {"loc": {"$geoWithin": {"$box": [[0, 0], [4, 4]]}}})) == [3]
    assert ids(find(engine, {"loc": {"$geoWithin": {"$center": [[3, 4], 1]}}})) == [3]
    assert ids(find(engine, {"loc": {"$within": {"$polygon": [[0, 0], [12, 0], [0, 12]]}}})) == [1, 3]
    assert ids(find(engine, {"loc": {"$geoWithin": {"$centerSphere": [[5, 5], 0.01]}}})) == [1]
    explain = ok(engine, {"explain": {"find": "c", "filter": WITHIN_SQUARE}})
    assert explain["queryPlanner"]["winningPlan"]["stage"] == "COLLSCAN"


def test_bad_geo_operands_fail_as_mongod(engine):
    insert(engine)
    reply = run(engine, {"find": "c", "filter": {"loc": {"$geoWithin": {"$geometry": point(1, 1)}}}})
    assert reply["code"] == 2 and "$within not supported with provided geometry" in reply["errmsg"]
    reply = run(engine, {"find": "c", "filter": {"loc": {"$geoWithin": {"$box": 1}}}})
    assert reply["code"] == 2


@pytest.mark.parametrize("filt", [WITHIN_SQUARE, INTERSECTS_SQUARE,
                                  {"loc": {"$geoWithin": {"$centerSphere": [[5, 5], 0.2]}}}])
def test_2dsphere_index_answers_what_the_scan_answers(engine, filt):
    insert(engine, DOCS[:-1])
    expected = ids(find(engine, filt))
    create_ok(engine, {"loc": "2dsphere"})
    assert ids(find(engine, filt)) == expected
    explain = ok(engine, {"explain": {"find": "c", "filter": filt}, "verbosity": "executionStats"})
    plan = explain["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "FETCH" and plan["inputStage"]["stage"] == "IXSCAN"
    assert plan["inputStage"]["indexName"] == "geo" and plan["filter"] == filt
    assert plan["inputStage"]["indexBounds"]["loc"][0].startswith("[")
    assert explain["executionStats"]["totalDocsExamined"] < len(DOCS) - 1


def test_a_value_that_is_no_geometry_fails_the_index_build(engine):
    insert(engine)
    reply = create(engine, {"loc": "2dsphere"})
    assert reply["code"] == 16755 and "geo element must be an array or object" in reply["errmsg"]


def test_create_2dsphere_index_writes_its_version_and_checks_its_spec(engine):
    create_ok(engine, {"loc": "2dsphere"})
    specs = ok(engine, {"listIndexes": "c"})["cursor"]["firstBatch"]
    assert specs[1]["2dsphereIndexVersion"] == 3 and specs[1]["key"] == {"loc": "2dsphere"}
    reply = create(engine, {"a": "2dsphere"}, **{"2dsphereIndexVersion": 4})
    assert reply["code"] == 17395
    reply = create(engine, {"a": "2dsphere"}, finestIndexedLevel=31)
    assert reply["code"] == 16748 and reply["errmsg"] == "finestIndexedLevel must be <= 30"
    reply = create(engine, {"a": "2dsphere"}, coarsestIndexedLevel=-1)
    assert reply["code"] == 16747


def test_create_2d_index_checks_bits_min_max(engine):
    reply = create(engine, {"p": "2d"}, bits=33)
    assert reply["code"] == 72 and "bits for hash must be > 0 and <= 32" in reply["errmsg"]
    reply = create(engine, {"p": "2d"}, min=5, max=5)
    assert reply["code"] == 72
    reply = create(engine, {"a": 1, "p": "2d"})
    assert reply["code"] == 16801 and reply["errmsg"] == "2d has to be first in index"
    create_ok(engine, {"p": "2d"}, min=0, max=100, bits=20)


def test_invalid_geometry_insert_fails_with_16755_and_writes_nothing(engine):
    create_ok(engine, {"loc": "2dsphere", "kind": 1})
    bad = {"_id": 1, "loc": {"type": "Point", "coordinates": [200, 0]}}
    reply = run(engine, {"insert": "c", "documents": [bad]})
    error = reply["writeErrors"][0]
    assert error["code"] == 16755
    assert error["errmsg"].startswith("Can't extract geo keys: { _id: 1, loc: { type: \"Point\"")
    assert "longitude/latitude is out of bounds" in error["errmsg"]
    crossing = {"type": "Polygon", "coordinates": [[[0, 0], [10, 10], [10, 0], [0, 10], [0, 0]]]}
    reply = run(engine, {"insert": "c", "documents": [{"_id": 2, "loc": crossing}]})
    assert reply["writeErrors"][0]["code"] == 16755
    assert find(engine, {}) == []
    # an update that would store an invalid geometry fails and leaves the document as it was
    ok(engine, {"insert": "c", "documents": [{"_id": 3, "loc": point(1, 1), "kind": "a"}]})
    reply = run(engine, {"update": "c", "updates": [{"q": {"_id": 3}, "u": {"$set": {"loc.coordinates": [1, 95]}}}]})
    assert reply["writeErrors"][0]["code"] == 16755
    assert find(engine, {}) == [{"_id": 3, "loc": point(1, 1), "kind": "a"}]


def test_index_build_over_invalid_geometry_fails_and_leaves_no_index(engine):
    insert(engine, [{"_id": 1, "loc": point(1, 1)}, {"_id": 2, "loc": {"type": "Point", "coordinates": [1]}}])
    reply = create(engine, {"loc": "2dsphere"})
    assert reply["code"] == 16755
    names = [ix["name"] for ix in ok(engine, {"listIndexes": "c"})["cursor"]["firstBatch"]]
    assert names == ["_id_"]


def test_compound_2dsphere_index_with_a_prefix_and_a_suffix(engine):
    docs = [{"_id": i, "kind": "ab"[i % 2], "loc": point(i % 10, i // 10), "n": i} for i in range(100)]
    insert(engine, docs)
    create_ok(engine, {"kind": 1, "loc": "2dsphere", "n": -1})
    filt = {"kind": "a", "loc": {"$geoWithin": {"$geometry": SQUARE}}}
    expected = sorted(d["_id"] for d in docs if d["kind"] == "a" and d["_id"] % 10 <= 10 and d["_id"] // 10 <= 10)
    assert ids(find(engine, filt)) == expected
    plan = ok(engine, {"explain": {"find": "c", "filter": filt}})["queryPlanner"]["winningPlan"]
    assert plan["inputStage"]["stage"] == "IXSCAN"
    assert plan["inputStage"]["indexBounds"]["kind"] == ['["a", "a"]']
    assert plan["inputStage"]["indexBounds"]["n"] == ["[MinKey, MaxKey]"]
    # without the prefix, the geo predicate is answered by a collection scan
    plain = {"loc": {"$geoWithin": {"$geometry": SQUARE}}}
    assert len(find(engine, plain)) == 100 - 0 - sum(1 for d in docs if d["_id"] // 10 > 10)
    assert find(engine, {"kind": "b", "n": 1}) == [docs[1]]


def test_2d_index_answers_flat_regions(engine):
    docs = [{"_id": i, "p": [i % 20 - 10, i // 20 - 10]} for i in range(400)] + [{"_id": 1000}]
    insert(engine, docs)
    regions = [{"$box": [[-3, -3], [2.5, 4]]}, {"$center": [[0, 0], 3]},
               {"$polygon": [[-5, -5], [5, -5], [0, 5]]}, {"$centerSphere": [[0, 0], 0.05]}]
    expected = [ids(find(engine, {"p": {"$geoWithin": r}})) for r in regions]
    create_ok(engine, {"p": "2d"})
    for region, want in zip(regions, expected):
        filt = {"p": {"$geoWithin": region}}
        assert ids(find(engine, filt)) == want and want
        explain = ok(engine, {"explain": {"find": "c", "filter": filt}, "verbosity": "executionStats"})
        assert explain["queryPlanner"]["winningPlan"]["inputStage"]["stage"] == "IXSCAN"
        assert explain["executionStats"]["totalDocsExamined"] < 200
    reply = run(engine, {"insert": "c", "documents": [{"_id": 2000, "p": [1]}]})
    assert reply["writeErrors"][0]["code"] == 13068
    reply = run(engine, {"insert": "c", "documents": [{"_id": 2000, "p": [500, 1]}]})
    assert reply["writeErrors"][0]["code"] == 13027


GRID = [{"_id": i, "loc": point((i % 21) - 10, (i // 21) - 10), "n": i % 3} for i in range(441)]


def sphere_meters(a, b):
    """Great-circle distance on MongoDB's earth radius (haversine), for the expected orders."""
    (lng1, lat1), (lng2, lat2) = [(math.radians(x), math.radians(y)) for x, y in (a, b)]
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    return 2 * 6378100 * math.asin(math.sqrt(h))


def test_near_without_a_geo_index_is_291(engine):
    insert(engine, GRID[:5])
    reply = run(engine, {"find": "c", "filter": {"loc": {"$near": {"$geometry": point(0, 0)}}}})
    assert reply["code"] == 291 and "unable to find index for $geoNear query" in reply["errmsg"]
    assert reply["codeName"] == "NoQueryExecutionPlans"


def test_near_places_and_counts_as_mongod(engine):
    insert(engine, GRID[:5])
    create_ok(engine, {"loc": "2dsphere"})
    near = {"$near": {"$geometry": point(0, 0)}}
    reply = run(engine, {"find": "c", "filter": {"$or": [{"loc": near}, {"n": 1}]}})
    assert reply["code"] == 2 and reply["errmsg"] == "geoNear must be top-level expr"
    reply = run(engine, {"find": "c", "filter": {"loc": near, "$and": [{"loc": near}]}})
    assert reply["code"] == 2 and reply["errmsg"] == "Too many geoNear expressions"


@pytest.mark.parametrize("query", [
    {"$near": {"$geometry": point(1.2, 0.7), "$maxDistance": 500_000}},
    {"$nearSphere": {"$geometry": point(1.2, 0.7), "$minDistance": 100_000, "$maxDistance": 600_000}},
    {"$near": {"$geometry": point(1.2, 0.7)}},
])
def test_near_2dsphere_returns_by_distance(engine, query):
    insert(engine, GRID)
    create_ok(engine, {"loc": "2dsphere"})
    got = find(engine, {"loc": query, "n": {"$ne": 2}})
    spec = next(iter(query.values()))
    lo, hi = spec.get("$minDistance", 0), spec.get("$maxDistance", math.inf)
    dist = {d["_id"]: sphere_meters((1.2, 0.7), d["loc"]["coordinates"]) for d in GRID}
    want = [d["_id"] for d in GRID if d["n"] != 2 and lo <= dist[d["_id"]] <= hi]
    assert sorted(d["_id"] for d in got) == sorted(want)
    distances = [dist[d["_id"]] for d in got]
    assert distances == sorted(distances)
    limited = find(engine, {"loc": query}, limit=5)
    assert [d["_id"] for d in limited] == [d["_id"] for d in find(engine, {"loc": query})][:5]
    explain = ok(engine, {"explain": {"find": "c", "filter": {"loc": query}, "limit": 5},
                          "verbosity": "executionStats"})
    stage = explain["queryPlanner"]["winningPlan"]["inputStage"]
    assert stage["stage"] == "GEO_NEAR_2DSPHERE" and stage["indexName"] == "geo"
    if "$maxDistance" not in spec:
        assert explain["executionStats"]["totalDocsExamined"] < len(GRID) / 2


def test_near_legacy_on_2d_and_sphere(engine):
    docs = [{"_id": i, "p": [(i % 21) - 10, (i // 21) - 10]} for i in range(441)]
    insert(engine, docs)
    create_ok(engine, {"p": "2d"})
    got = find(engine, {"p": {"$near": [0.3, 0.1], "$maxDistance": 3}})
    flat = {d["_id"]: math.hypot(d["p"][0] - 0.3, d["p"][1] - 0.1) for d in docs}
    assert sorted(d["_id"] for d in got) == sorted(i for i, v in flat.items() if v <= 3)
    assert [flat[d["_id"]] for d in got] == sorted(flat[d["_id"]] for d in got)
    got = find(engine, {"p": {"$nearSphere": [0.3, 0.1], "$maxDistance": 0.05}})
    radians = {d["_id"]: sphere_meters((0.3, 0.1), d["p"]) / 6378100 for d in docs}
    assert sorted(d["_id"] for d in got) == sorted(i for i, v in radians.items() if v <= 0.05)
    explain = ok(engine, {"explain": {"find": "c", "filter": {"p": {"$near": [0, 0]}}}})
    assert explain["queryPlanner"]["winningPlan"]["stage"] == "GEO_NEAR_2D"
    reply = run(engine, {"find": "c", "filter": {"p": {"$near": {"$geometry": point(0, 0)}}}})
    assert reply["code"] == 291
    reply = run(engine, {"find": "c", "filter": {"p": {"$near": [500, 0]}}})
    assert reply["code"] == 16433


def test_near_with_a_sort_and_a_compound_prefix(engine):
    insert(engine, GRID)
    create_ok(engine, {"n": 1, "loc": "2dsphere"})
    filt = {"n": 1, "loc": {"$near": {"$geometry": point(0, 0), "$maxDistance": 300_000}}}
    got = find(engine, filt)
    assert got and all(d["n"] == 1 for d in got)
    dist = [sphere_meters((0, 0), d["loc"]["coordinates"]) for d in got]
    assert dist == sorted(dist)
    by_id = find(engine, filt, sort={"_id": -1})
    assert [d["_id"] for d in by_id] == sorted((d["_id"] for d in got), reverse=True)
    reply = run(engine, {"find": "c", "filter": {"loc": filt["loc"]}})
    assert reply["code"] == 291   # the prefix is not bound


def aggregate(engine, pipeline):
    reply = ok(engine, {"aggregate": "c", "pipeline": pipeline, "cursor": {}})
    return [plain(d) for d in reply["cursor"]["firstBatch"]]


def test_geo_near_stage(engine):
    insert(engine, GRID)
    create_ok(engine, {"loc": "2dsphere"})
    stage = {"near": point(0.4, 0.2), "distanceField": "dist.m", "maxDistance": 250_000,
             "query": {"n": 0}, "includeLocs": "where", "distanceMultiplier": 0.001}
    got = aggregate(engine, [{"$geoNear": stage}, {"$limit": 50}])
    want = sorted((sphere_meters((0.4, 0.2), d["loc"]["coordinates"]), d["_id"]) for d in GRID
                  if d["n"] == 0 and sphere_meters((0.4, 0.2), d["loc"]["coordinates"]) <= 250_000)
    assert [d["_id"] for d in got] == [i for _, i in want][:50]
    for doc, (meters, _) in zip(got, want):
        assert doc["dist"]["m"] == pytest.approx(meters / 1000, rel=1e-9)
        assert doc["where"] == doc["loc"]
    # legacy near, spherical: radians; the key picks the field
    got = aggregate(engine, [{"$geoNear": {"near": [0.4, 0.2], "distanceField": "d", "spherical": True,
                                           "key": "loc", "minDistance": 0.01}}, {"$limit": 3}])
    assert all(d["d"] >= 0.01 for d in got) and [d["d"] for d in got] == sorted(d["d"] for d in got)
    assert got[0]["d"] == pytest.approx(sphere_meters((0.4, 0.2), got[0]["loc"]["coordinates"]) / 6378100)


def test_geo_near_stage_errors(engine):
    insert(engine, GRID[:3])

    def code(stage, pipeline_tail=()):
        reply = run(engine, {"aggregate": "c", "pipeline": [stage, *pipeline_tail], "cursor": {}})
        assert reply["ok"] == 0
        return reply["code"], reply["errmsg"]
    assert code({"$geoNear": {"near": [0, 0], "distanceField": "d"}}) == (
        27, "$geoNear requires a 2d or 2dsphere index, but none were found")
    assert code({"$geoNear": {"near": [0, 0]}})[0] == 16606
    assert code({"$geoNear": {"near": [0, 0], "distanceField": "d", "limit": 3}})[0] == 2
    assert code({"$geoNear": {"near": [0, 0], "distanceField": "d", "bogus": 1}})[0] == 2
    assert code({"$match": {}}, [{"$geoNear": {"near": [0, 0], "distanceField": "d"}}])[0] == 40602
    create_ok(engine, {"loc": "2dsphere"})
    run(engine, {"createIndexes": "c", "indexes": [{"key": {"other": "2dsphere"}, "name": "o"}]})
    assert code({"$geoNear": {"near": [0, 0], "distanceField": "d"}}) == (
        27, "There is more than one 2dsphere index on db.c; unsure which to use for $geoNear")


def test_meta_geo_near_distance_and_point_in_find(engine):
    insert(engine, GRID)
    create_ok(engine, {"loc": "2dsphere"})
    near = {"loc": {"$near": {"$geometry": point(0.4, 0.2)}}}
    got = find(engine, near, limit=5, projection={"n": 1, "d": {"$meta": "geoNearDistance"},
                                                  "p": {"$meta": "geoNearPoint"}})
    assert [d["_id"] for d in got] == [d["_id"] for d in find(engine, near, limit=5)]
    for doc in got:
        source = next(d for d in GRID if d["_id"] == doc["_id"])
        assert set(doc) == {"_id", "n", "d", "p"}   # an inclusion projection: no hidden fields leak
        assert doc["d"] == pytest.approx(sphere_meters((0.4, 0.2), source["loc"]["coordinates"]), rel=1e-6)
        assert doc["p"] == source["loc"]
    # beside exclusions, and as the sort key (nearest first)
    got = find(engine, near, limit=3, projection={"loc": 0, "d": {"$meta": "geoNearDistance"}},
               sort={"d": {"$meta": "geoNearDistance"}})
    assert "loc" not in got[0] and [d["d"] for d in got] == sorted(d["d"] for d in got)
    # legacy $nearSphere on the 2dsphere index: radians
    got = find(engine, {"loc": {"$nearSphere": [0.4, 0.2]}}, limit=1,
               projection={"d": {"$meta": "geoNearDistance"}})
    source = next(d for d in GRID if d["_id"] == got[0]["_id"])
    assert got[0]["d"] == pytest.approx(sphere_meters((0.4, 0.2), source["loc"]["coordinates"]) / 6378100,
                                        rel=1e-6)
    # without a near query the metadata is not available, as in mongod
    reply = run(engine, {"find": "c", "filter": {"n": 1}, "projection": {"d": {"$meta": "geoNearDistance"}}})
    assert (reply["code"], reply["errmsg"]) == (40218, "query requires geoNearDistance metadata, but it is "
                                                       "not available")


def test_meta_geo_near_in_find_on_a_2d_index(engine):
    docs = [{"_id": i, "p": [i % 10, i // 10]} for i in range(100)]
    insert(engine, docs)
    create_ok(engine, {"p": "2d"})
    got = find(engine, {"p": {"$near": [2.2, 3.1]}}, limit=4,
               projection={"_id": 0, "d": {"$meta": "geoNearDistance"}, "at": {"$meta": "geoNearPoint"}})
    want = sorted((math.hypot(d["p"][0] - 2.2, d["p"][1] - 3.1), d["p"]) for d in docs)[:4]
    assert [(d["d"], d["at"]) for d in got] == [(pytest.approx(w), p) for w, p in want]


def test_meta_geo_near_after_the_geo_near_stage(engine):
    insert(engine, GRID)
    create_ok(engine, {"loc": "2dsphere"})
    got = aggregate(engine, [
        {"$geoNear": {"near": point(0.4, 0.2), "distanceField": "km", "distanceMultiplier": 0.001}},
        {"$limit": 4},
        {"$addFields": {"m": {"$meta": "geoNearDistance"}}},
        {"$project": {"km": 1, "m": 1, "pt": {"$meta": "geoNearPoint"}}},
        {"$sort": {"m": -1}}])
    assert [d["m"] for d in got] == sorted((d["m"] for d in got), reverse=True)
    for doc in got:
        assert set(doc) == {"_id", "km", "m", "pt"}
        assert doc["km"] == pytest.approx(doc["m"] / 1000)   # the metadata is not multiplied
        assert doc["pt"] == next(d for d in GRID if d["_id"] == doc["_id"])["loc"]
    reply = run(engine, {"aggregate": "c", "cursor": {}, "pipeline": [
        {"$match": {"n": 1}}, {"$project": {"m": {"$meta": "geoNearDistance"}}}]})
    assert reply["code"] == 40218
