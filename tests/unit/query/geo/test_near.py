"""Near search: distance order equals brute force, and a small limit touches few keys."""
from __future__ import annotations

import bisect
import itertools
import math
import random

import pytest

from ginkgodb.errors import CommandError
from ginkgodb.query.geo import (
    CRS,
    S2IndexParams,
    TwoDParams,
    geohash,
    near_2d,
    near_2dsphere,
    near_brute_force,
    parse_near,
    parse_stored,
    s2,
    sphere_distance,
)
from ginkgodb.query.geo.s2keys import index_cells

P = S2IndexParams()


class FakeS2Index:
    """Sorted (signed cell, rid) keys; counts the keys each scan reads."""

    def __init__(self, docs):
        self.geoms = {rid: parse_stored("loc", v).projected(CRS.SPHERE) for rid, v in docs.items()}
        self.keys = sorted((c, rid) for rid, v in docs.items() for c in index_cells("loc", v, {}, P))
        self.read = 0

    def scan(self, ranges):
        for lo, hi in ranges:
            i = bisect.bisect_left(self.keys, (lo, -1))
            while i < len(self.keys) and self.keys[i][0] <= hi:
                self.read += 1
                yield self.keys[i][1]
                i += 1

    def distance(self, center):
        return lambda rid: sphere_distance(center, self.geoms[rid])


def random_docs(n, seed, spread=1.0):
    rnd = random.Random(seed)
    docs = {}
    for rid in range(n):
        x, y = rnd.uniform(-spread, spread), rnd.uniform(-spread, spread)
        if rid % 10 == 0:
            docs[rid] = {"type": "LineString", "coordinates": [[x, y], [x + 0.01, y + 0.02]]}
        elif rid % 10 == 1:
            docs[rid] = {"type": "Polygon", "coordinates": [[[x, y], [x + 0.01, y], [x, y + 0.01], [x, y]]]}
        else:
            docs[rid] = {"type": "Point", "coordinates": [x, y]}
    return docs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_order_equals_brute_force(seed):
    index = FakeS2Index(random_docs(600, seed))
    center = s2.point(0.1, -0.2)
    dist = index.distance(center)
    got = list(near_2dsphere(center, index.scan, dist, P))
    want = near_brute_force((rid, dist(rid)) for rid in index.geoms)
    assert [d for d, _ in got] == pytest.approx([d for d, _ in want])
    assert sorted(r for _, r in got) == sorted(r for _, r in want)


def test_min_and_max_distance():
    index = FakeS2Index(random_docs(400, 9))
    center = s2.point(0, 0)
    dist = index.distance(center)
    lo, hi = 0.3 / 180 * math.pi, 0.8 / 180 * math.pi
    got = list(near_2dsphere(center, index.scan, dist, P, lo, hi))
    want = near_brute_force(((rid, dist(rid)) for rid in index.geoms), lo, hi)
    assert [r for _, r in got] == [r for _, r in want] and got


def test_limit_10_touches_few_keys():
    index = FakeS2Index(random_docs(5000, 4, spread=20.0))
    center = s2.point(3, 4)
    first = list(itertools.islice(near_2dsphere(center, index.scan, index.distance(center), P), 10))
    assert len(first) == 10
    assert index.read < len(index.keys) / 20, (index.read, len(index.keys))


def test_empty_index_ends():
    index = FakeS2Index({})
    assert list(near_2dsphere(s2.point(0, 0), index.scan, lambda rid: 0.0, P)) == []


def test_2d_near_order_and_few_keys():
    params = TwoDParams()
    rnd = random.Random(5)
    points = {rid: (rnd.uniform(-50, 50), rnd.uniform(-50, 50)) for rid in range(3000)}
    keys = sorted((geohash.hash_point(x, y, params), rid) for rid, (x, y) in points.items())
    read = [0]

    def scan(ranges):
        for lo, hi in ranges:
            i = bisect.bisect_left(keys, (lo, -1))
            while i < len(keys) and keys[i][0] <= hi:
                read[0] += 1
                yield keys[i][1]
                i += 1

    def dist(rid):
        return math.hypot(points[rid][0] - 1, points[rid][1] - 2)
    got = list(near_2d(1, 2, scan, dist, params, 0, 30))
    want = near_brute_force(((rid, dist(rid)) for rid in points), 0, 30)
    assert [r for _, r in got] == [r for _, r in want]
    read[0] = 0
    assert len(list(itertools.islice(near_2d(1, 2, scan, dist, params), 10))) == 10
    assert read[0] < len(keys) / 10


def test_parse_near_forms():
    q = parse_near({"$near": [1, 2], "$maxDistance": 3})
    assert (q.center.flat_point, q.max_distance, q.is_near_sphere, q.units_are_radians) == ((1.0, 2.0), 3.0, False, False)
    q = parse_near({"$nearSphere": [1, 2], "$minDistance": 0.1})
    assert q.units_are_radians and q.spherical("2d") and q.to_radians(0.1) == 0.1
    q = parse_near({"$near": {"$geometry": {"type": "Point", "coordinates": [1, 2]}, "$maxDistance": 1000}})
    assert q.is_geojson and q.to_radians(6378100.0) == pytest.approx(1.0)
    q = parse_near({"$near": [1, 2, 5]})
    assert q.max_distance == 5.0
    q = parse_near({"$nearSphere": {"type": "Point", "coordinates": [1, 2]}})
    assert q.is_near_sphere and not q.units_are_radians


@pytest.mark.parametrize("operand,code,message", [
    ({"$near": [0, 0], "$maxDistance": -1}, 16896, "$maxDistance must be non-negative"),
    ({"$near": [0, 0], "$minDistance": "x"}, 16893, "$minDistance must be a number"),
    ({"$near": [0, 0], "$foo": 1}, 34413, "invalid argument in geo near query: $foo"),
    ({"$near": [0, 0, -2]}, 18522, "max distance must be non-negative"),
    ({"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}, "$minDistance": -1}}, 2,
     "$minDistance must be non-negative"),
    ({"$near": {"$geometry": [0, 0]}}, 2, "$near requires geojson point, given [ 0, 0 ]"),
    ({"$near": {"$geometry": {"type": "Point", "coordinates": [0, 100]}}}, 2,
     'invalid point in geo near query $geometry argument: { type: "Point", coordinates: [ 0, 100 ] }'
     "  longitude/latitude is out of bounds, lng: 0 lat: 100"),
    ({"$near": {"$maxDistance": 1}}, 2, "$geometry is required for geo near query"),
    ({"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}, "$x": 1}}, 2,
     "invalid argument in geo near query: $x"),
    ({"$near": 5}, 2, "geo near query argument is not an object"),
    ({"$nearSphere": [0, 100]}, 2, "Legacy point is out of bounds for spherical query"),
])
def test_parse_near_errors(operand, code, message):
    with pytest.raises(CommandError) as info:
        parse_near(operand)
    assert (info.value.code, info.value.errmsg) == (code, message)


@pytest.mark.parametrize("wanted", [1, 3, 10, 50, 700])
def test_wanted_sizes_the_rounds_never_the_results(wanted):
    """With mixed geometries (coarse ancestor keys) every record is still read once, and the
    whole order is the brute-force order whatever `wanted` says."""
    index = FakeS2Index(random_docs(600, 7))
    center = s2.point(0.2, 0.1)
    dist = index.distance(center)
    calls: dict = {}

    def counted(rid):
        calls[rid] = calls.get(rid, 0) + 1
        return dist(rid)
    got = list(near_2dsphere(center, index.scan, counted, P, wanted=wanted))
    want = near_brute_force((rid, dist(rid)) for rid in index.geoms)
    assert [r for _, r in got] == [r for _, r in want]
    assert max(calls.values()) == 1   # each key range is scanned once over the search


def test_a_small_wanted_reads_fewer_keys():
    index = FakeS2Index(random_docs(5000, 4, spread=20.0))
    center = s2.point(3, 4)
    list(itertools.islice(near_2dsphere(center, index.scan, index.distance(center), P), 10))
    unknown = index.read
    index.read = 0
    first = list(itertools.islice(near_2dsphere(center, index.scan, index.distance(center), P, wanted=10), 10))
    assert len(first) == 10 and index.read < unknown, (index.read, unknown)


def test_scanned_ranges_are_read_once():
    from ginkgodb.query.geo.near import _Scanned
    rnd = random.Random(1)
    for _ in range(200):
        scanned, covered = _Scanned(), set()
        for _ in range(5):
            ranges = [(a, a + rnd.randint(0, 10)) for a in rnd.sample(range(100), 5)]
            wanted = {x for lo, hi in ranges for x in range(lo, hi + 1)}
            fresh = [x for lo, hi in scanned.take(ranges) for x in range(lo, hi + 1)]
            assert len(fresh) == len(set(fresh)) and set(fresh) == wanted - covered
            covered |= wanted
