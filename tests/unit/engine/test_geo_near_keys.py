"""2dsphere key format 2: a plain point's unit vector ends its keys, so `$near` ranks such
documents from their keys and reads only those it returns (docs/design/geo-index.md).

Checked here: the suffix bytes are keycodec's, every write keeps keys and documents in step
(updates that move a point inside its leaf cell or turn it into another geometry, deletes),
answers equal a brute-force distance over all documents, and an index built in format 1 is
still served."""
from __future__ import annotations

import math
import random
import struct

import pytest
from bson.binary import Binary
from bson.int64 import Int64
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ginkgodb.bsonutil import keycodec
from ginkgodb.engine.access.geo2dsphere import S2Access
from ginkgodb.query.geo import parse_stored, predicates, s2, s2keys
from ginkgodb.query.geo.shapes import CRS

from .test_geo_queries import ok, plain, point, run

R = s2.EARTH_RADIUS_METERS


def brute_meters(center, value):
    """Distance in meters from center (lng, lat) to a stored geometry, through the geo core's
    exact predicate (None: no usable geometry), as a collection scan would measure it."""
    geometry = parse_stored("loc", value, skip_validation=True)
    return predicates.sphere_distance(s2.point(*center), geometry.projected(CRS.SPHERE)) * R


def near_ids(engine, center, limit, extra=None, **distances):
    cond = {"$near": {"$geometry": point(*center), **distances}}
    filt = {"loc": cond, **(extra or {})}
    reply = ok(engine, {"find": "c", "filter": filt, "limit": limit, "batchSize": 10_000})
    return [plain(d) for d in reply["cursor"]["firstBatch"]]


def geo_near(engine, center, query=None):
    stage = {"near": point(*center), "distanceField": "d", "query": query or {}}
    reply = ok(engine, {"aggregate": "c", "pipeline": [{"$geoNear": stage}], "cursor": {"batchSize": 10_000}})
    return [plain(d) for d in reply["cursor"]["firstBatch"]]


def create_index(engine):
    ok(engine, {"createIndexes": "c", "indexes": [{"key": {"loc": "2dsphere"}, "name": "geo"}]})


def index_meta(engine):
    reader = engine.reader()
    reader.open()
    try:
        return next(ix for ix in reader.catalog.get("db", "c").indexes if ix.name == "geo")
    finally:
        reader.close()


def test_point_suffix_is_keycodecs_binary():
    rnd = random.Random(3)
    for _ in range(200):
        lng, lat = rnd.uniform(-179.9, 179.9), rnd.uniform(-89.9, 89.9)
        vector = s2.unit_vector(lng, lat)
        payload = struct.pack(">3d", *vector) + b"\x01"
        suffix = s2keys.point_suffix(vector)
        assert suffix == keycodec.encode_value(Binary(payload, 128))
        assert len(suffix) == s2keys.POINT_SUFFIX_SIZE
        cell = s2keys.index_cells("loc", point(lng, lat), {}, s2keys.S2IndexParams())[0]
        key = s2keys.encode_cell(cell) + suffix
        assert keycodec.decode_key(key, [1, 1]) == [Int64(cell), Binary(payload, 128)]
    assert s2keys.point_suffix(None) == keycodec.encode_value(Binary(b"\x00", 128))


@pytest.mark.parametrize("value, plain_point", [
    (point(1.5, 2), True), ([1.5, 2], True), ([1, 2], True),
    (point(180, 0), False), (point(0, 90), False), ([True, 2], False), ([Int64(1), 2], False),
    ({"type": "Point", "coordinates": [1, 2], "crs": {"type": "name", "properties": {"name": "EPSG:4326"}}},
     False),
    ({"type": "MultiPoint", "coordinates": [[1, 2]]}, False), ({"x": 1, "y": 2}, False),
])
def test_only_plain_points_get_a_vector(value, plain_point):
    vector = s2keys.single_point_vector([value])
    assert (vector is not None) == plain_point
    assert s2keys.single_point_vector([value, value]) is None   # two values: read the document


def test_new_indexes_use_format_2_and_list_indexes_hides_it(engine):
    ok(engine, {"insert": "c", "documents": [{"_id": 1, "loc": point(1, 1)}]})
    create_index(engine)
    assert index_meta(engine).options[s2keys.FORMAT_OPTION] == 2
    specs = ok(engine, {"listIndexes": "c"})["cursor"]["firstBatch"]
    assert all(s2keys.FORMAT_OPTION not in spec for spec in specs)
    reply = run(engine, {"createIndexes": "c", "indexes": [{"key": {"loc": "2dsphere"}, "name": "geo",
                                                              s2keys.FORMAT_OPTION: 1}]})
    assert reply["ok"] == 0   # not an option a user sets


def _grid(n=400, seed=1):
    rnd = random.Random(seed)
    return [{"_id": i, "loc": point(rnd.uniform(-2, 2), rnd.uniform(-2, 2)), "n": i % 3} for i in range(n)]


def _explain_near(engine, center, limit):
    reply = ok(engine, {"explain": {"find": "c", "filter": {"loc": {"$near": {"$geometry": point(*center)}}},
                                    "limit": limit}, "verbosity": "executionStats"})
    return reply["executionStats"]


def test_points_are_ranked_from_keys_and_only_the_returned_are_read(engine):
    docs = _grid()
    ok(engine, {"insert": "c", "documents": docs})
    create_index(engine)
    stats = _explain_near(engine, (0.1, 0.2), 10)
    assert stats["nReturned"] == 10
    assert stats["totalDocsExamined"] == 10 < stats["totalKeysExamined"]
    want = sorted((brute_meters((0.1, 0.2), d["loc"]), d["_id"]) for d in docs)
    got = near_ids(engine, (0.1, 0.2), 10)
    assert [d["_id"] for d in got] == [i for _, i in want[:10]]


def test_a_format_1_index_is_still_served(engine, monkeypatch):
    """An index built before format 2 (no format in its catalog entry) keeps format 1: its
    keys have no point suffix, writes keep them so, and near searches read every candidate."""
    docs = _grid()
    ok(engine, {"insert": "c", "documents": docs})
    monkeypatch.setattr(S2Access, "normalize", staticmethod(lambda name, key, options: (key, options)))
    create_index(engine)
    monkeypatch.undo()
    assert s2keys.FORMAT_OPTION not in index_meta(engine).options
    ok(engine, {"insert": "c", "documents": [{"_id": 1000, "loc": point(0.1, 0.2)}]})
    ok(engine, {"update": "c", "updates": [{"q": {"_id": 3}, "u": {"$set": {"loc": point(0.1, 0.21)}}}]})
    ok(engine, {"delete": "c", "deletes": [{"q": {"_id": 4}, "limit": 1}]})
    docs = [d for d in docs if d["_id"] not in (3, 4)] + [{"_id": 1000, "loc": point(0.1, 0.2)},
                                                           {"_id": 3, "loc": point(0.1, 0.21)}]
    want = sorted((brute_meters((0.1, 0.2), d["loc"]), d["_id"]) for d in docs)
    assert [d["_id"] for d in near_ids(engine, (0.1, 0.2), 10)] == [i for _, i in want[:10]]
    stats = _explain_near(engine, (0.1, 0.2), 10)
    assert stats["totalDocsExamined"] > 10
    report = ok(engine, {"validate": "c"})
    assert report["valid"], report


def test_an_unknown_key_format_is_refused(engine, monkeypatch):
    ok(engine, {"insert": "c", "documents": [{"_id": 1, "loc": point(1, 1)}]})
    monkeypatch.setattr(S2Access, "normalize",
                        staticmethod(lambda name, key, options: (key, {**options, s2keys.FORMAT_OPTION: 3})))
    reply = run(engine, {"createIndexes": "c", "indexes": [{"key": {"loc": "2dsphere"}, "name": "geo"}]})
    assert reply["ok"] == 0 and reply["code"] == 238 and "key format 3" in reply["errmsg"]


def test_a_point_moved_inside_its_leaf_cell_is_measured_where_it_is(engine):
    """A move of 1e-9 degrees (about 0.1 mm) keeps the leaf cell: the key still changes (its
    suffix), so the distance comes from the new location."""
    ok(engine, {"insert": "c", "documents": [{"_id": 1, "loc": point(1.0, 1.0)},
                                             {"_id": 2, "loc": point(1.0, 1.0 + 2e-9)}]})
    create_index(engine)
    moved = point(1.0, 1.0 + 3e-9)
    cell = s2keys.index_cells
    params = s2keys.S2IndexParams()
    assert cell("loc", moved, {}, params) == cell("loc", point(1.0, 1.0), {}, params)
    ok(engine, {"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"loc": moved}}}]})
    got = geo_near(engine, (1.0, 1.0))
    assert [d["_id"] for d in got] == [2, 1]
    assert got[1]["d"] == brute_meters((1.0, 1.0), moved)
    report = ok(engine, {"validate": "c"})
    assert report["valid"], report


def test_geometries_other_than_one_point_are_read_and_measured(engine):
    """MultiPoint, lines, polygons, collections, compound keys over arrays: no vector in
    their keys (or, compound, the same one on each); an update from a point to a multipoint
    drops the vector."""
    docs = [
        {"_id": 1, "loc": point(3, 3), "tags": ["a", "b"]},
        {"_id": 2, "loc": {"type": "MultiPoint", "coordinates": [[10, 10], [0.5, 0.5]]}, "tags": "a"},
        {"_id": 3, "loc": {"type": "LineString", "coordinates": [[-1, 2], [1, 2]]}, "tags": "b"},
        {"_id": 4, "loc": {"type": "Polygon", "coordinates": [[[-1, -1], [1, -1], [1, 1], [-1, 1], [-1, -1]]]},
         "tags": "a"},
        {"_id": 5, "loc": {"type": "GeometryCollection", "geometries": [
            point(4, 4), {"type": "LineString", "coordinates": [[0.4, -3], [0.4, -2]]}]}},
        {"_id": 6, "loc": point(6, 6), "tags": ["a"]},
    ]
    ok(engine, {"insert": "c", "documents": docs})
    ok(engine, {"createIndexes": "c", "indexes": [{"key": {"loc": "2dsphere", "tags": 1}, "name": "geo"}]})
    ok(engine, {"update": "c", "updates": [
        {"q": {"_id": 6}, "u": {"$set": {"loc": {"type": "MultiPoint", "coordinates": [[6, 6], [0.2, 0.1]]}}}}]})
    docs[5]["loc"] = {"type": "MultiPoint", "coordinates": [[6, 6], [0.2, 0.1]]}
    center = (0.3, 0.3)

    want = sorted((brute_meters(center, d["loc"]), d["_id"]) for d in docs)
    got = geo_near(engine, center)
    assert [d["_id"] for d in got] == [i for _, i in want]
    assert [d["d"] for d in got] == pytest.approx([m for m, _ in want], rel=1e-12, abs=1e-9)
    got = near_ids(engine, center, 3, {"tags": "a"})
    assert [d["_id"] for d in got] == [i for _, i in want if "a" in docs[i - 1].get("tags", [])][:3]


# --- a property: any writes, then any near query, as brute force over all documents ----------

coords = st.tuples(st.floats(-3, 3).map(lambda v: round(v, 4)), st.floats(-3, 3).map(lambda v: round(v, 4)))
geometries = st.one_of(
    coords.map(lambda c: point(*c)),
    coords.map(list),
    st.lists(coords.map(list), min_size=1, max_size=3).map(lambda cs: {"type": "MultiPoint", "coordinates": cs}),
    st.tuples(coords, coords).filter(lambda ab: max(abs(ab[0][0] - ab[1][0]), abs(ab[0][1] - ab[1][1])) > 1e-3).map(
        lambda ab: {"type": "LineString", "coordinates": [list(ab[0]), list(ab[1])]}),
)
writes = st.lists(st.tuples(st.sampled_from(["insert", "update", "nudge", "delete"]),
                            st.integers(0, 11), geometries), max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(initial=st.lists(geometries, min_size=1, max_size=12), ops=writes, center=coords,
       limit=st.integers(1, 8), filtered=st.booleans(), max_km=st.sampled_from([None, 150, 400]))
def test_near_after_any_writes_equals_brute_force(engine, initial, ops, center, limit, filtered, max_km):
    run(engine, {"drop": "c"})   # hypothesis reuses the fixture's engine
    docs = {i: {"_id": i, "loc": g, "k": i % 2} for i, g in enumerate(initial)}
    ok(engine, {"insert": "c", "documents": list(docs.values())})
    create_index(engine)
    for op, i, g in ops:
        if op == "insert" and i not in docs:
            docs[i] = {"_id": i, "loc": g, "k": i % 2}
            ok(engine, {"insert": "c", "documents": [docs[i]]})
        elif op == "update" and i in docs:
            docs[i]["loc"] = g
            ok(engine, {"update": "c", "updates": [{"q": {"_id": i}, "u": {"$set": {"loc": g}}}]})
        elif op == "nudge" and i in docs and isinstance(docs[i]["loc"], dict) and docs[i]["loc"]["type"] == "Point":
            lng, lat = docs[i]["loc"]["coordinates"]
            docs[i]["loc"] = point(lng, lat + 1e-9)   # inside the same leaf cell, mostly
            ok(engine, {"update": "c", "updates": [{"q": {"_id": i}, "u": {"$set": {"loc": docs[i]["loc"]}}}]})
        elif op == "delete" and i in docs:
            del docs[i]
            ok(engine, {"delete": "c", "deletes": [{"q": {"_id": i}, "limit": 1}]})

    def distance(doc):
        return brute_meters(center, doc["loc"])
    extra = {"k": 1} if filtered else None
    pool = [d for d in docs.values() if not filtered or d["k"] == 1]
    want = sorted(m for m in (distance(d) for d in pool) if max_km is None or m <= max_km * 1000)
    got = near_ids(engine, center, limit, extra, **({"$maxDistance": max_km * 1000} if max_km else {}))
    got_m = [distance(d) for d in got]
    assert got_m == pytest.approx(want[:limit], rel=1e-12, abs=1e-6)
    assert all(math.isfinite(m) for m in got_m)


def test_kept_ancestor_probes_never_hide_a_later_write(engine):
    """Near searches keep their ancestor probes per data version: a polygon written after a
    search (stored under cells coarser than the next search's covering, so found only by an
    ancestor probe) is found by the next search."""
    far = {"_id": -2, "loc": {"type": "MultiPoint", "coordinates": [[40, 40], [41, 41]]}}
    ok(engine, {"insert": "c", "documents": _grid(200) + [far]})   # multikey already: no catalog change below
    create_index(engine)
    for _ in range(2):
        assert [d["_id"] for d in near_ids(engine, (0.0, 0.0), 5)] != [-1]
    square = {"type": "Polygon", "coordinates": [[[-15, -15], [15, -15], [15, 15], [-15, 15], [-15, -15]]]}
    ok(engine, {"insert": "c", "documents": [{"_id": -1, "loc": square}]})
    assert near_ids(engine, (0.0, 0.0), 5)[0]["_id"] == -1
    ok(engine, {"delete": "c", "deletes": [{"q": {"_id": -1}, "limit": 1}]})
    assert -1 not in [d["_id"] for d in near_ids(engine, (0.0, 0.0), 5)]


def test_kept_ancestor_probes_of_a_prefixed_index_never_hide_a_later_write(engine):
    """The same with a field before the geo field (probes kept by their whole key, since the
    prefix's value is part of it): a write under one prefix value is found by the next search
    of that value only."""
    far = {"_id": -2, "n": 1, "loc": {"type": "MultiPoint", "coordinates": [[40, 40], [41, 41]]}}
    ok(engine, {"insert": "c", "documents": _grid(200) + [far]})
    ok(engine, {"createIndexes": "c", "indexes": [{"key": {"n": 1, "loc": "2dsphere"}, "name": "geo"}]})
    for _ in range(2):
        assert -1 not in [d["_id"] for d in near_ids(engine, (0.0, 0.0), 5, {"n": 1})]
    square = {"type": "Polygon", "coordinates": [[[-15, -15], [15, -15], [15, 15], [-15, 15], [-15, -15]]]}
    ok(engine, {"insert": "c", "documents": [{"_id": -1, "n": 1, "loc": square}]})
    assert near_ids(engine, (0.0, 0.0), 5, {"n": 1})[0]["_id"] == -1
    assert -1 not in [d["_id"] for d in near_ids(engine, (0.0, 0.0), 5, {"n": 2})]
    want = sorted((brute_meters((0.0, 0.0), d["loc"]), d["_id"]) for d in _grid(200) if d["n"] == 2)
    assert [d["_id"] for d in near_ids(engine, (0.0, 0.0), 5, {"n": 2})] == [i for _, i in want[:5]]


def test_probes_of_an_index_without_prefix_fields_are_kept_by_cell_id(engine):
    ok(engine, {"insert": "c", "documents": _grid(200)})
    create_index(engine)
    near_ids(engine, (0.0, 0.0), 5)
    reader = engine.reader()
    reader.open()
    try:
        access = next(a for a in reader.catalog.collection("db", "c").indexes if isinstance(a, S2Access))
        table = access.probed(reader.txn.data_version())
        assert table and all(type(cell) is int for cell in table)
        assert not any(table.values())   # points only: no entry holds a covering's ancestor
    finally:
        reader.close()


def test_views_of_unchanged_data_share_a_data_version(kv):
    first, second = kv.snapshot(), kv.snapshot()
    assert first.data_version() is not None and first.data_version() == second.data_version()
    with kv.writer() as txn:
        assert txn.data_version() is None   # a write transaction's view is its own
        txn.put(b"k", b"v")
        txn.commit()
    third = kv.snapshot()
    assert third.data_version() != first.data_version()
    assert first.get(b"k") is None and third.get(b"k") == b"v"
    for snap in (first, second, third):
        snap.release()


@pytest.mark.parametrize("skip, limit, extra", [(0, 10, None), (3, 7, None), (2, 6, {"n": 1}), (0, 0, {"n": 2})])
def test_records_read_ahead_for_a_round_are_the_brute_force_answer_over_small_batches(engine, skip, limit, extra):
    """A round's first results are read together before they are returned: the answer over
    many small batches (getMore) is the brute-force one, with skip, limit and another
    predicate, and a limited search reads no more records than it returns and skips."""
    docs = _grid(600, seed=3)
    ok(engine, {"insert": "c", "documents": docs})
    create_index(engine)
    center = (0.3, -0.4)
    pool = [d for d in docs if extra is None or d["n"] == extra["n"]]
    want = [i for _, i in sorted((brute_meters(center, d["loc"]), d["_id"]) for d in pool)]
    want = want[skip:skip + limit] if limit else want[skip:]
    filt = {"loc": {"$near": {"$geometry": point(*center)}}, **(extra or {})}
    reply = ok(engine, {"find": "c", "filter": filt, "skip": skip, "limit": limit, "batchSize": 2})
    got = [plain(d)["_id"] for d in reply["cursor"]["firstBatch"]]
    cursor_id = reply["cursor"]["id"]
    while cursor_id:
        reply = ok(engine, {"getMore": cursor_id, "collection": "c", "batchSize": 3})
        got += [plain(d)["_id"] for d in reply["cursor"]["nextBatch"]]
        cursor_id = reply["cursor"]["id"]
    assert got == want
    if limit and extra is None:
        stats = ok(engine, {"explain": {"find": "c", "filter": filt, "skip": skip, "limit": limit},
                            "verbosity": "executionStats"})["executionStats"]
        assert stats["totalDocsExamined"] == skip + limit
