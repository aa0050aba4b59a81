"""The advisor's shard-key estimate (`ginkgodb advise --shard-key`, from analyzeShardKey on an
unsharded copy) against a real sharded run of the same documents over two shards: the data each
shard holds and where new inserts land agree within 10 points for a monotonic ranged key (the
hot last shard) and for a hashed `_id` (even)."""
from __future__ import annotations

import pytest
from e2e.test_sharded_cluster import sharded  # noqa: F401  (this module gets a cluster of its own)

from ginkgodb import MongoClient as EmbeddedClient
from ginkgodb.advisor.shard_key import analyse

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
DOCS, NEW = 2000, 600
BOUND = 0.10


def _documents(start: int, n: int) -> list[dict]:
    return [{"_id": i, "ts": 1_000_000 + i, "v": i % 13} for i in range(start, start + n)]


def _shares(counts: list[int]) -> list[float]:
    total = sum(counts) or 1
    return [n / total for n in counts]


@pytest.mark.parametrize("key", [{"ts": 1}, {"_id": "hashed"}], ids=["monotonic-ts", "hashed-id"])
def test_the_advisor_estimate_agrees_with_the_measured_distribution(sharded, key):  # noqa: F811
    local = EmbeddedClient()   # the advisor's view: the same documents, unsharded
    local.app.events.insert_many(_documents(0, DOCS))
    local.app.events.create_index([(f, 1 if d == 1 else "hashed") for f, d in key.items()])
    facts = analyse(local, "app.events", key, list(local.app.events.find()), shards=2)
    assert facts.error is None, facts.error
    estimate = facts.estimates[0]
    assert estimate["key"] == key

    c = sharded["client"]
    name = "adv_" + "_".join(key)
    ns = f"app.{name}"
    if key == {"ts": 1}:   # the balancer's layout of two shards: the range cut at the median
        c.admin.command("shardCollection", ns, key=key)
        c.app[name].insert_many(_documents(0, DOCS))
        middle = 1_000_000 + DOCS // 2
        c.admin.command("split", ns, middle={"ts": middle})
        low_owner = c.config.chunks.find_one({"ns": ns, "max": {"ts": middle}})["shard"]
        other = "shard0001" if low_owner == "shard0000" else "shard0000"
        c.admin.command("moveChunk", ns, find={"ts": middle}, to=other)
        order = [int(low_owner[-1]), int(other[-1])]   # shards in chunk order, as the estimate lists them
    else:
        c.admin.command("shardCollection", ns, key=key, numInitialChunks=4)
        c.app[name].insert_many(_documents(0, DOCS))
        order = [0, 1]
    shards = [sharded["shards"][i].app[name] for i in order]
    data = _shares([s.count_documents({"_id": {"$lt": DOCS}}) for s in shards])
    c.app[name].insert_many(_documents(DOCS, NEW))   # new documents, still increasing
    inserts = _shares([s.count_documents({"_id": {"$gte": DOCS}}) for s in shards])
    print(f"{key}: estimated data {estimate['data']} inserts {estimate['inserts']}; "
          f"measured data {[round(x, 3) for x in data]} inserts {[round(x, 3) for x in inserts]}")
    assert all(abs(e - m) <= BOUND for e, m in zip(estimate["data"], data)), (estimate, data)
    assert all(abs(e - m) <= BOUND for e, m in zip(estimate["inserts"], inserts)), (estimate, inserts)
