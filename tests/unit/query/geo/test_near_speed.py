"""The near search's fast paths give exactly what the slow ones give.

Plain-float distances against the S2 bindings (bit for bit), the integer key encoding against
keycodec, the ancestor walk against the per-level loop, and a search sized by a key sample
against brute force.
"""
from __future__ import annotations

import bisect
import random

import pytest
from bson.int64 import Int64

from ginkgodb.bsonutil import keycodec
from ginkgodb.query.geo import S2IndexParams, near_2dsphere, near_brute_force, s2, s2keys

from .test_near import FakeS2Index, random_docs

P = S2IndexParams()


def test_plain_float_distance_is_the_bindings_bit_for_bit():
    rnd = random.Random(7)
    for i in range(20_000):
        lng, lat = rnd.uniform(-179.9, 179.9), rnd.uniform(-89.9, 89.9)
        near = (lng + rnd.uniform(-0.2, 0.2), max(-89.9, min(89.9, lat + rnd.uniform(-0.2, 0.2))))
        center = s2.point(*(near if i % 2 else (rnd.uniform(-180, 180), rnd.uniform(-90, 90))))
        p = s2.point(lng, lat)
        assert s2.unit_vector(lng, lat) == (p.x(), p.y(), p.z())
        assert s2.vector_angle(s2.vector_of(center), s2.unit_vector(lng, lat)) == s2.angle_to(center, lng, lat)


@pytest.mark.parametrize("value", [1, -1, 2**53, 2**53 + 1, -(2**53) - 1, 2**63 - 1, -(2**63),
                                   10**18, -(10**18), 1159211294649011263, -6917529027641081855])
def test_cell_encoding_is_keycodecs(value):
    assert s2keys._encode_int64(value) == keycodec.encode_value(Int64(value))
    assert s2keys.approximate_cell(s2keys.encode_cell(value)) == float(value)


def test_cell_encoding_is_keycodecs_on_random_ids():
    rnd = random.Random(3)
    for _ in range(20_000):
        v = rnd.randrange(-(2**63), 2**63) or 1
        encoded = s2keys._encode_int64(v)
        assert encoded == keycodec.encode_value(Int64(v))
        assert s2keys.approximate_cell(encoded) == float(v)


def test_cell_key_end_is_prefix_end_of_the_encoding():
    from ginkgodb.planner.key_ranges import prefix_end
    rnd = random.Random(5)
    values = [1, -1, 2**63 - 1, -(2**63), 0] + [rnd.randrange(-(2**63), 2**63) for _ in range(5_000)]
    for v in values:
        assert s2keys.cell_key_end(v) == prefix_end(s2keys.encode_cell(v))
        assert b"ab" + s2keys.cell_key_end(v) == prefix_end(b"ab" + s2keys.encode_cell(v))


def test_descendant_spans_and_strict_ancestors_are_descendants_and_ancestors():
    rnd = random.Random(9)
    for _ in range(500):
        point = s2.point(rnd.uniform(-180, 180), rnd.uniform(-90, 90))
        cells = sorted({s2.S2.S2CellId(point).parent(rnd.randrange(P.coarsest_level, 24)).id()
                        for _ in range(3)})
        spans, ancestors = s2keys.descendants_and_ancestors(cells, P)
        assert s2keys.descendant_spans(cells) == spans
        assert {a for c in cells for a in s2keys.strict_ancestors(c, P)} == set(ancestors)


def _intervals_per_level(cover_ids, params):
    """The reference: every ancestor of every cell, level by level."""
    out, ancestors = [], set()
    for cid in cover_ids:
        lsb = cid & -cid
        out.append((s2.to_signed(cid - (lsb - 1)), s2.to_signed(cid + (lsb - 1))))
        level = 30 - (lsb.bit_length() - 1) // 2
        for parent_level in range(level - 1, params.coarsest_level - 1, -1):
            parent_lsb = 1 << (2 * (30 - parent_level))
            ancestors.add((cid & -parent_lsb) | parent_lsb)
    return sorted(out + [(s2.to_signed(a), s2.to_signed(a)) for a in ancestors])


@pytest.mark.parametrize("coarsest", [0, 2, 7])
def test_ancestor_walk_equals_the_per_level_loop(coarsest):
    params = S2IndexParams(coarsest_level=coarsest)
    rnd = random.Random(coarsest)
    for _ in range(200):
        center = s2.point(rnd.uniform(-180, 180), rnd.uniform(-90, 90))
        cells = s2keys.cover([s2.cap(center, rnd.uniform(1e-5, 0.3))], 0, 23, 20)
        assert s2keys.cells_to_intervals(cells, params) == _intervals_per_level(cells, params)


class SampledIndex(FakeS2Index):
    def sample(self, lo, hi, n):
        i = bisect.bisect_left(self.keys, (lo, -1))
        return [float(c) for c, _ in self.keys[i:i + n] if c <= hi]


@pytest.mark.parametrize("seed,wanted,spread", [(1, 1, 1.0), (2, 10, 1.0), (3, 10, 0.05),
                                                (4, 50, 2.0), (5, 10, 30.0)])
def test_a_sampled_first_round_changes_nothing(seed, wanted, spread):
    index = SampledIndex(random_docs(800, seed, spread))
    center = s2.point(0.05, -0.03)
    dist = index.distance(center)
    want = near_brute_force((rid, dist(rid)) for rid in index.geoms)
    got = list(near_2dsphere(center, index.scan, dist, P, wanted=wanted, sample=index.sample))
    assert got == want
    lo, hi = want[3][0], want[-5][0]
    got = list(near_2dsphere(center, index.scan, dist, P, lo, hi, wanted=wanted, sample=index.sample))
    assert got == [(d, rid) for d, rid in want if lo <= d <= hi]


@pytest.mark.parametrize("seed,wanted", [(6, 10), (7, 1), (8, 40)])
def test_density_hints_change_nothing_even_when_stale(seed, wanted):
    """A density kept from earlier searches only sizes the first annulus: searches hinted by
    their own data, by much sparser or much denser data, or by nothing give the same answer."""
    from ginkgodb.query.geo.near import DensityHints
    index = SampledIndex(random_docs(800, seed, 1.0))
    rnd = random.Random(seed)
    for _ in range(12):
        center = s2.point(rnd.uniform(-0.5, 0.5), rnd.uniform(-0.5, 0.5))
        vector = s2.vector_of(center)
        dist = index.distance(center)
        want = near_brute_force((rid, dist(rid)) for rid in index.geoms)
        own = DensityHints()
        for hints in (own, own):   # sampled and kept, then used
            got = list(near_2dsphere(center, index.scan, dist, P, wanted=wanted, sample=index.sample,
                                     hints=hints, center_vector=vector))
            assert got == want
        assert own.get(DensityHints.cube_of(vector)) is not None
        for stale in (1e-3, 1e12):   # keys per steradian, far from this data's
            hints = DensityHints()
            hints.put(DensityHints.cube_of(vector), stale)
            got = list(near_2dsphere(center, index.scan, dist, P, wanted=wanted, sample=index.sample,
                                     hints=hints, center_vector=vector))
            assert got == want


def test_density_hints_are_sampled_again_and_bounded():
    from ginkgodb.query.geo.near import DensityHints
    hints = DensityHints()
    cube = DensityHints.cube_of((1.0, 0.0, 0.0))
    hints.put(cube, 5.0)
    assert [hints.get(cube) for _ in range(DensityHints.REFRESH)] == [5.0] * DensityHints.REFRESH
    assert hints.get(cube) is None   # due for a fresh sample
    for i in range(DensityHints.MAX_ENTRIES + 1):
        hints.put((i, 0, 0), 1.0)
    assert len(hints._by_cube) <= DensityHints.MAX_ENTRIES
