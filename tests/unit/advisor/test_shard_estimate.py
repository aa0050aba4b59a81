"""The shard distribution estimate and --shard-key parsing."""
from __future__ import annotations

import pytest

from ginkgodb.advisor.shard_key import estimate, parse


def test_parse_shard_key_specs():
    assert parse("shop.orders:created") == ("shop.orders", {"created": 1})
    assert parse("shop.orders:customer,_id") == ("shop.orders", {"customer": 1, "_id": 1})
    assert parse("shop.orders:_id=hashed") == ("shop.orders", {"_id": "hashed"})
    assert parse('shop.orders:{"a": 1}') == ("shop.orders", {"a": 1})
    for bad in ("orders:created", "shop.orders", "shop.orders:"):
        with pytest.raises(ValueError):
            parse(bad)


def test_low_cardinality_key_leaves_shards_empty_and_compound_key_fills_them():
    docs = [{"_id": i, "status": ["a", "b"][i % 2]} for i in range(400)]
    candidate, compound, hashed = estimate(docs, {"status": 1}, monotonic=False, shards=4)
    assert sorted(candidate["data"], reverse=True)[2:] == [0.0, 0.0]   # two values: two shards
    assert compound["key"] == {"status": 1, "_id": 1} and compound["data"] == [0.25] * 4
    assert hashed["key"] == {"_id": "hashed"} and hashed["inserts"] == [0.25] * 4


def test_monotonic_key_sends_every_insert_to_the_last_shard():
    docs = [{"_id": i, "t": i} for i in range(400)]
    candidate = estimate(docs, {"t": 1}, monotonic=True, shards=4)[0]
    assert candidate["data"] == [0.25] * 4 and candidate["inserts"] == [0.0, 0.0, 0.0, 1.0]
