"""Legacy 2d index: geohash keys, parameters, errors and box ranges."""
from __future__ import annotations

import random

import pytest
from bson.binary import Binary

from ginkgodb.bsonutil import keycodec
from ginkgodb.errors import CommandError
from ginkgodb.query.geo import TwoDParams, geohash, parse_geo_predicate, parse_stored, within

P = TwoDParams()


def test_hash_vectors():
    # (0, 0) is the middle: x' = y' = 2**31, so the two top bits are set.
    assert geohash.hash_point(0, 0, P) == 0xC000000000000000
    assert geohash.hash_point(-180, -180, P) == 0
    # 26 bits per axis: the low 12 bits are always 0; max is moved inside the last bucket.
    assert geohash.hash_point(180, 180, P) == 0xFFFFFFFFFFFFF000
    # x before y: x in the upper half only sets bit 63.
    assert geohash.hash_point(0, -180, P) == 0x8000000000000000
    assert geohash.hash_point(-180, 0, P) == 0x4000000000000000


def test_unhash_gives_the_cell_corner():
    h = geohash.hash_point(10.3, -20.7, P)
    x, y = geohash.unhash(h, P)
    edge = P.cell_edge(P.bits)
    assert x <= 10.3 < x + edge and y <= -20.7 < y + edge


def test_key_is_bindata_128_big_endian():
    h = geohash.hash_point(1, 2, P)
    assert geohash.hash_key_value(h) == Binary(h.to_bytes(8, "big"), 128)
    assert geohash.encode_hash(h) == keycodec.encode_value(Binary(h.to_bytes(8, "big"), 128))
    hashes = sorted(geohash.hash_point(random.uniform(-180, 180), random.uniform(-180, 180), P)
                    for _ in range(50))
    assert [geohash.encode_hash(h) for h in hashes] == sorted(geohash.encode_hash(h) for h in hashes)


def test_params():
    assert geohash.params_from_spec({}) == P
    p = geohash.params_from_spec({"bits": 32, "min": -500, "max": 500})
    assert (p.bits, p.min, p.max) == (32, -500.0, 500.0)


@pytest.mark.parametrize("spec,message", [
    ({"bits": 0}, "bits for hash must be > 0 and <= 32, but 0 bits were specified"),
    ({"bits": 33}, "bits for hash must be > 0 and <= 32, but 33 bits were specified"),
    ({"min": 10, "max": 10}, "region for hash must be valid and have positive area, but [10, 10] was specified"),
    ({"bits": "x"}, "wrong type for 'bits' field, expected number, found bits: \"x\""),
])
def test_param_errors(spec, message):
    with pytest.raises(CommandError) as info:
        geohash.params_from_spec(spec)
    assert (info.value.code, info.value.errmsg) == (72, message)


def test_document_keys_and_errors():
    doc = {"_id": 1, "loc": [200, 0]}
    with pytest.raises(CommandError) as info:
        geohash.index_hashes(doc["loc"], doc, P)
    assert (info.value.code, info.value.errmsg) == (
        13027, "point not in interval of [ -180, 180 ] :: caused by :: { _id: 1, loc: [ 200, 0 ] }")
    assert geohash.index_hashes([180, -180], {}, P) == [geohash.hash_point(180, -180, P)]
    assert len(geohash.index_hashes([[1, 2], {"x": 3, "y": 4}], {}, P)) == 2
    assert geohash.index_hashes({"lng": 1, "lat": 2}, {}, P) == [geohash.hash_point(1, 2, P)]
    assert geohash.index_hashes("nowhere", {}, P) == [] and geohash.index_hashes(None, {}, P) == []
    for value, code in (([], 13067), ([1], 13068), (["a", 1], 13026), ([[1, 2], 5], 13654)):
        with pytest.raises(CommandError) as info:
            geohash.index_hashes(value, {"_id": 1, "loc": value}, P)
        assert info.value.code == code


def test_query_point_out_of_range():
    with pytest.raises(CommandError) as info:
        geohash.query_point_hash(0, 181, P)
    assert (info.value.code, info.value.errmsg) == (
        16433, "point not in interval of [ -180, 180 ] :: caused by :: [ 0, 181 ]")


def _in(ranges, h):
    return any(lo <= h <= hi for lo, hi in ranges)


@pytest.mark.parametrize("region", [
    {"$box": [[-10, -10], [30, 5]]},
    {"$box": [[170, 170], [180, 180]]},
    {"$polygon": [[0, 0], [40, 0], [0, 40]]},
    {"$center": [[-100, 20], 7.5]},
    {"$centerSphere": [[179, 0], 0.05]},      # crosses the antimeridian
])
def test_region_ranges_never_miss_a_point(region):
    rnd = random.Random(7)
    geo = parse_geo_predicate({"$geoWithin": region})
    ranges = geohash.region_ranges(geo.region, P)
    assert len(ranges) <= geohash.QUERY_MAX_CELLS
    hits = 0
    for _ in range(3000):
        x, y = rnd.uniform(-180, 180), rnd.uniform(-90, 90) if "$centerSphere" in region else rnd.uniform(-180, 180)
        if geo.matches(parse_stored("loc", [x, y])):
            hits += 1
            assert _in(ranges, geohash.hash_point(x, y, P)), (x, y)
    corners = [(180, 180), (170, 170)] if region == {"$box": [[170, 170], [180, 180]]} else []
    for x, y in corners:
        assert within(geo.region, parse_stored("loc", [x, y])) and _in(ranges, geohash.hash_point(x, y, P))
    assert hits > 0 or corners
