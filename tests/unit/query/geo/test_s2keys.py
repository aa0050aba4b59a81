"""2dsphere v3 keys, parameters and query ranges."""
from __future__ import annotations

import pytest
from bson.int64 import Int64

from ginkgodb.bsonutil import keycodec
from ginkgodb.errors import CommandError
from ginkgodb.query.geo import S2IndexParams, parse_geo_predicate, s2, s2keys
from ginkgodb.query.geo.s2keys import (
    cells_to_intervals,
    index_cells,
    interval_contains,
    merge_intervals,
    params_from_spec,
    region_intervals,
)

P = S2IndexParams()
SQUARE = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]


def test_default_parameters_are_mongods_version_3():
    assert (P.index_version, P.finest_level, P.coarsest_level, P.max_cells) == (3, 16, 2, 20)
    assert params_from_spec({"2dsphereIndexVersion": 3}) == P
    custom = params_from_spec({"2dsphereIndexVersion": 3, "finestIndexedLevel": 20,
                               "coarsestIndexedLevel": 5, "maxCellsInCovering": 8})
    assert (custom.finest_level, custom.coarsest_level, custom.max_cells) == (20, 5, 8)


@pytest.mark.parametrize("spec,code,message", [
    ({"2dsphereIndexVersion": 3, "coarsestIndexedLevel": -1}, 16747, "coarsestIndexedLevel must be >= 0"),
    ({"2dsphereIndexVersion": 3, "finestIndexedLevel": 31}, 16748, "finestIndexedLevel must be <= 30"),
    ({"2dsphereIndexVersion": 3, "finestIndexedLevel": 3, "coarsestIndexedLevel": 4}, 16749,
     "finestIndexedLevel must be >= coarsestIndexedLevel"),
    ({"2dsphereIndexVersion": 5}, 17395,
     "unsupported geo index version { 2dsphereIndexVersion : 5 }, only support versions: [1,2,3]"),
])
def test_parameter_errors(spec, code, message):
    with pytest.raises(CommandError) as info:
        params_from_spec(spec)
    assert (info.value.code, info.value.errmsg) == (code, message)


def test_older_versions_are_refused_not_ignored():
    with pytest.raises(CommandError) as info:
        params_from_spec({"2dsphereIndexVersion": 2})
    assert info.value.code == 238


def test_point_key_is_its_leaf_cell_as_a_signed_long():
    doc = {"_id": 1, "loc": {"type": "Point", "coordinates": [-73.97, 40.77]}}
    cells = index_cells("loc", doc["loc"], doc, P)
    leaf = s2.S2.S2CellId(s2.point(-73.97, 40.77))
    assert cells == [s2.to_signed(leaf.id())] and leaf.level() == 30
    # Legacy pairs index the same cell.
    assert index_cells("loc", [-73.97, 40.77], doc, P) == cells
    assert s2keys.index_key_values("loc", [-73.97, 40.77], doc, P) == [Int64(cells[0])]


def test_signed_keys_of_faces_4_and_5_are_negative():
    cells = index_cells("loc", [100, -60], {}, P)     # in the southern faces
    assert cells[0] < 0 and s2.to_unsigned(cells[0]) >> 61 in (4, 5)


def test_polygon_covering_levels_and_count():
    cells = index_cells("loc", {"type": "Polygon", "coordinates": [SQUARE]}, {}, P)
    levels = {s2.S2.S2CellId(s2.to_unsigned(c)).level() for c in cells}
    assert all(P.coarsest_level <= lv <= P.finest_level for lv in levels)
    assert 1 <= len(cells) <= 2 * P.max_cells   # advisory limit, as in S2


def test_multi_geometry_cells_cover_every_part():
    mp = {"type": "MultiPoint", "coordinates": [[1, 1], [50, 50], [-120, -30]]}
    cells = index_cells("loc", mp, {}, P)
    for lng, lat in mp["coordinates"]:
        leaf = s2.S2.S2CellId(s2.point(lng, lat))
        assert any(s2.S2.S2CellId(s2.to_unsigned(c)).contains(leaf) for c in cells)


def test_sparse_values_get_no_key():
    assert index_cells("loc", None, {}, P) == [] and index_cells("loc", [], {}, P) == []


@pytest.mark.parametrize("value,detail", [
    ({"type": "Point", "coordinates": [200, 0]}, "longitude/latitude is out of bounds, lng: 200 lat: 0"),
    ([200, 0], "can't project geometry into spherical CRS: [ 200, 0 ]"),
    ("here", 'geo element must be an array or object: loc: "here"'),
    ({"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]]},
     "Loop is not valid: [ [ 0, 0 ], [ 1, 1 ], [ 1, 0 ], [ 0, 1 ], [ 0, 0 ] ] Edges 0 and 2 cross. "
     "Edge locations in degrees: [0.0000000, 0.0000000]-[1.0000000, 1.0000000] and "
     "[1.0000000, 0.0000000]-[0.0000000, 1.0000000]"),
])
def test_insert_errors_are_16755_with_the_document(value, detail):
    doc = {"_id": 7, "loc": value}
    with pytest.raises(CommandError) as info:
        index_cells("loc", value, doc, P)
    from ginkgodb.query.geo.geojson import show_document
    assert info.value.code == 16755 and info.value.code_name == "Location16755"
    assert info.value.errmsg == f"Can't extract geo keys: {show_document(doc)}  {detail}"


def test_error_message_prints_doubles_as_mongod():
    doc = {"_id": 1.0, "loc": {"type": "Point", "coordinates": [200.5, 0.0]}}
    with pytest.raises(CommandError) as info:
        index_cells("loc", doc["loc"], doc, P)
    assert info.value.errmsg == ("Can't extract geo keys: { _id: 1.0, loc: { type: \"Point\", "
                                 "coordinates: [ 200.5, 0.0 ] } }  longitude/latitude is out of "
                                 "bounds, lng: 200.5 lat: 0")


def test_intervals_hold_the_covering_and_its_ancestors():
    region = parse_geo_predicate({"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [SQUARE]}}}).region
    cover = s2keys.query_cover(region)
    intervals = region_intervals(region, P)
    assert intervals == sorted(intervals)
    for cid in cover:
        cell = s2.S2.S2CellId(cid)
        assert (s2.to_signed(cell.range_min().id()), s2.to_signed(cell.range_max().id())) in intervals
        while cell.level() > P.coarsest_level:
            cell = cell.parent()
            assert (s2.to_signed(cell.id()), s2.to_signed(cell.id())) in intervals
    # Disjoint, as mongod checks (isValidFor).
    for (_a_lo, a_hi), (b_lo, _b_hi) in zip(intervals, intervals[1:]):
        assert a_hi < b_lo


def test_point_inside_a_region_is_in_its_ranges():
    region = parse_geo_predicate({"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [SQUARE]}}}).region
    intervals = merge_intervals(region_intervals(region, P))
    for value in ([5, 5], [0.001, 9.99], {"type": "LineString", "coordinates": [[1, 1], [2, 2]]}):
        for c in index_cells("loc", value, {}, P):
            assert interval_contains(intervals, c)
    assert not any(interval_contains(intervals, c) for c in index_cells("loc", [-100, -45], {}, P))


def test_key_bytes_order_like_the_signed_ids():
    cells = sorted(index_cells("loc", [x, y], {}, P)[0] for x, y in [(0, 0), (100, -60), (-170, 80), (10, 10)])
    encoded = [s2keys.encode_cell(c) for c in cells]
    assert encoded == sorted(encoded)
    assert s2keys.encode_cell(cells[0]) == keycodec.encode_value(Int64(cells[0]))


def test_flat_regions_have_no_2dsphere_ranges():
    region = parse_geo_predicate({"$geoWithin": {"$box": [[0, 0], [1, 1]]}}).region
    with pytest.raises(ValueError):
        region_intervals(region, P)


def test_cells_to_intervals_stops_at_the_coarsest_level():
    leaf = s2.S2.S2CellId(s2.point(1, 1))
    intervals = cells_to_intervals([leaf.parent(5).id()], P)
    points = [lo for lo, hi in intervals if lo == hi]
    assert sorted(s2.S2.S2CellId(s2.to_unsigned(p)).level() for p in points) == [2, 3, 4]


def test_cell_arithmetic_agrees_with_s2s_own_calls():
    """cells_to_intervals computes ranges and ancestors from cell ids; S2's calls must agree."""
    import random

    from ginkgodb.query.geo import S2IndexParams, s2
    from ginkgodb.query.geo.s2keys import cells_to_intervals

    def by_s2(cover_ids, params):
        ancestors, intervals = set(), []
        for cid in cover_ids:
            cell = s2.S2.S2CellId(cid)
            intervals.append((s2.to_signed(cell.range_min().id()), s2.to_signed(cell.range_max().id())))
            while cell.level() > params.coarsest_level:
                cell = cell.parent()
                ancestors.add(cell.id())
        return sorted(intervals + [(s2.to_signed(a), s2.to_signed(a)) for a in ancestors])

    rng = random.Random(3)
    for _ in range(500):
        ids = [s2.S2.S2CellId(s2.point(rng.uniform(-180, 180), rng.uniform(-90, 90))).parent(rng.randint(0, 30)).id()
               for _ in range(3)]
        for params in (S2IndexParams(), S2IndexParams(coarsest_level=0), S2IndexParams(coarsest_level=5)):
            assert cells_to_intervals(ids, params) == by_s2(ids, params)
