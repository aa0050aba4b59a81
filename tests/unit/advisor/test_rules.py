"""Each rule: one data set that triggers it and one that must not."""
from __future__ import annotations

import datetime
import uuid

import bson
import pytest
from support.advisor_facts import facts, index, shape

from ginkgodb.advisor import rules
from ginkgodb.advisor.collect import DatabaseFacts
from ginkgodb.advisor.shard_key import ShardKeyFacts


def fired(rule_id: str, subject) -> list:
    return rules.RULES[rule_id].check(subject)


BASE = datetime.datetime(2024, 5, 9)


def test_every_rule_is_registered_with_a_stable_id():
    assert set(rules.RULES) == {
        "unbounded-array", "large-document", "compressible-large-field", "objectid-as-string", "random-id",
        "redundant-index", "unused-index", "too-many-indexes", "too-many-collections", "missing-index",
        "case-insensitive-regex", "bucket-candidate", "attribute-pattern", "schema-versions",
        "approximation-candidate", "computed-pattern", "monotonic-shard-key", "jumbo-chunk-risk",
        "random-shard-key", "scatter-gather-reads"}


def test_unbounded_array():
    grows = [{"_id": i, "log": list(range(1500 if i == 3 else 5))} for i in range(20)]
    pushes = [{"op": "update", "ns": "db.c", "command": {"q": {"_id": 3}, "u": {"$push": {"log": 1}}}}]
    found = fired("unbounded-array", facts(grows, profile=pushes))
    assert [f.evidence["maxElements"] for f in found] == [1500]
    assert found[0].severity == "high" and found[0].evidence["unslicedPushes"]
    assert not fired("unbounded-array", facts([{"_id": i, "log": [1, 2, 3]} for i in range(20)]))


def test_large_document():
    assert fired("large-document", facts([{"_id": 1, "blob": bson.Binary(b"x" * (9 * 1024 * 1024))}]))
    assert not fired("large-document", facts([{"_id": 1, "blob": bson.Binary(b"x" * 1000)}]))


def test_compressible_large_field():
    docs = [{"_id": i, "body": "x" * 20_000} for i in range(10)]
    frequent = [shape({"_id": {"$eq": "?number"}}, execs=500, returned=500, plan="IDHACK")]
    found = fired("compressible-large-field", facts(docs, shapes=frequent))
    assert found and found[0].evidence["executions"] == 500
    projected = [shape({"_id": {"$eq": "?number"}}, execs=500, returned=500, projection={"body": 0})]
    assert not fired("compressible-large-field", facts(docs, shapes=projected))
    assert not fired("compressible-large-field", facts([{"_id": i, "body": "small"} for i in range(10)],
                                                       shapes=frequent))


def test_objectid_as_string():
    docs = [{"_id": i, "user": str(bson.ObjectId())} for i in range(50)]
    found = fired("objectid-as-string", facts(docs, indexes=[index("user")]))
    assert found and found[0].estimate["bytesSavedPerValue"] == 17 and found[0].evidence["indexesOnField"] == 1
    assert not fired("objectid-as-string", facts([{"_id": i, "user": bson.ObjectId()} for i in range(50)]))
    assert not fired("objectid-as-string", facts([{"_id": i, "user": f"user-{i}"} for i in range(50)]))


def test_random_id():
    assert fired("random-id", facts([{"_id": str(uuid.uuid4())} for _ in range(50)]))
    assert fired("random-id", facts([{"_id": uuid.uuid4().hex} for _ in range(50)]))   # MD5-length hex
    assert not fired("random-id", facts([{"_id": bson.ObjectId()} for _ in range(50)]))


def test_redundant_index():
    found = fired("redundant-index", facts([{"_id": 1}], indexes=[index("a"), index("a", "b")]))
    assert [f.evidence["index"] for f in found] == ["a_1"]
    assert not fired("redundant-index", facts([{"_id": 1}], indexes=[index("a", unique=True), index("a", "b")]))
    assert not fired("redundant-index", facts([{"_id": 1}], indexes=[index("b"), index("a", "b")]))


def test_unused_index():
    cf = facts([{"_id": 1}], indexes=[index("a"), index("b")], accesses={"_id_": 50, "a_1": 10, "b_1": 0})
    assert [f.evidence["index"] for f in fired("unused-index", cf)] == ["b_1"]
    idle = facts([{"_id": 1}], indexes=[index("a"), index("b")], accesses={"_id_": 0, "a_1": 0, "b_1": 0})
    assert not fired("unused-index", idle)   # nothing ran: no evidence


def test_too_many_indexes():
    many = [index(f"f{i}") for i in range(6)]
    heavy = {"queries": {"count": 10}, "getmore": {"count": 0}, "insert": {"count": 900},
             "update": {"count": 100}, "remove": {"count": 0}}
    assert fired("too-many-indexes", facts([{"_id": 1}], indexes=many, top=heavy))
    light = dict(heavy, insert={"count": 1}, update={"count": 0})
    assert not fired("too-many-indexes", facts([{"_id": 1}], indexes=many, top=light))


def test_too_many_collections():
    assert fired("too-many-collections", DatabaseFacts("db", collection_count=600, index_count=1200))
    assert not fired("too-many-collections", DatabaseFacts("db", collection_count=20, index_count=40))


def test_missing_index_suggests_equality_sort_range():
    s = shape({"status": {"$eq": "?string"}, "total": {"$gt": "?number"}}, sort={"created": -1},
              execs=200, examined=200_000, returned=400)
    found = fired("missing-index", facts([{"_id": 1}], shapes=[s]))
    assert list(found[0].evidence["suggestedIndex"].items()) == [("status", 1), ("created", -1), ("total", 1)]
    served = shape({"status": {"$eq": "?string"}}, execs=200, examined=400, returned=400, plan="IXSCAN { status: 1 }")
    assert not fired("missing-index", facts([{"_id": 1}], indexes=[index("status")], shapes=[served]))


def test_case_insensitive_regex():
    s = shape({"name": {"$regex": "?regex/i"}}, execs=50, examined=5000, returned=10)
    assert fired("case-insensitive-regex", facts([{"_id": 1}], shapes=[s]))
    plain = shape({"name": {"$regex": "?regex"}}, execs=50, examined=5000, returned=10)
    assert not fired("case-insensitive-regex", facts([{"_id": 1}], shapes=[plain]))


def test_bucket_candidate_with_seed_estimate():
    docs = [{"_id": f"{m}:C{p}", "name": f"C{p}", "ts": BASE + datetime.timedelta(minutes=m), "a": "xx"}
            for m in range(181) for p in range(8)]
    found = fired("bucket-candidate", facts(docs, count=len(docs)))
    assert found
    est = found[0].estimate
    assert found[0].evidence["entityField"] == "name" and found[0].evidence["timeField"] == "ts"
    assert est["documentsPerBucket"] == 60
    assert est["bucketedByHour"]["today"]["documents"] == len(docs) // 60
    assert est["bucketedByHour"]["today"]["indexBytes"] < est["current"]["today"]["indexBytes"] / 50
    sparse = [{"_id": i, "name": f"C{i % 8}", "ts": BASE + datetime.timedelta(hours=i)} for i in range(1200)]
    assert not fired("bucket-candidate", facts(sparse))


def test_attribute_pattern():
    docs = [{"_id": i, "release_USA": "d", "release_UK": "d", "release_China": "d", "release_FR": "d"}
            for i in range(10)]
    idx = [index("release_USA"), index("release_UK"), index("release_China")]
    found = fired("attribute-pattern", facts(docs, indexes=idx))
    assert found and found[0].estimate == {"indexesBefore": 3, "indexesAfter": 1}
    assert not fired("attribute-pattern", facts(docs, indexes=idx[:1]))


def test_schema_versions():
    v1 = [{"_id": i, "name": "x", "age": 1} for i in range(30)]
    v2 = [{"_id": i, "name": "x", "age": 1, "city": "y"} for i in range(30)]
    found = fired("schema-versions", facts(v1 + v2))
    assert found and any(s["added"] == ["city"] for s in found[0].evidence["shapes"])
    versioned = v1 + [dict(d, schema_version="2.0") for d in v2]
    assert not fired("schema-versions", facts(versioned))
    assert not fired("schema-versions", facts(v1 + v1))


def test_approximation_candidate():
    hits = [{"op": "update", "ns": "db.c", "command": {"q": {"_id": "home"}, "u": {"$inc": {"views": 1}}}}
            for _ in range(300)]
    reads = [{"op": "query", "ns": "db.c", "command": {"filter": {}}} for _ in range(20)]
    found = fired("approximation-candidate", facts([{"_id": "home"}], profile=hits + reads))
    assert found and found[0].estimate["writesEvery10"] == 30
    assert not fired("approximation-candidate", facts([{"_id": "home"}], profile=hits[:50] + reads * 10))


def test_computed_pattern():
    pipeline = [{"$match": {"shop": {"$eq": "?string"}}}, {"$group": {"_id": "$day", "n": {"$sum": "?number"}}}]
    s = shape(pipeline=pipeline, execs=300, examined=300 * 5000, returned=300, plan="IXSCAN { shop: 1 }")
    assert fired("computed-pattern", facts([{"_id": 1}], shapes=[s]))
    rare = shape(pipeline=pipeline, execs=3, examined=3 * 5000, returned=3)
    assert not fired("computed-pattern", facts([{"_id": 1}], shapes=[rare]))


def _sk(key, analysis, field_docs=None):
    sk = ShardKeyFacts("db.c", key, 4, analysis)
    if field_docs is not None:
        sk.field_stats = facts(field_docs).fields.get(next(iter(key)))
    return sk


def _kc(**kw):
    base = {"numDocsTotal": 10_000, "avgDocSizeBytes": 200, "numDistinctValues": 10_000,
            "mostCommonValues": [{"value": {"k": 1}, "frequency": 1}],
            "monotonicity": {"recordIdCorrelationCoefficient": 0.1, "type": "not monotonic"}}
    base.update(kw)
    return {"keyCharacteristics": base}


def test_monotonic_shard_key():
    mono = _kc(monotonicity={"recordIdCorrelationCoefficient": 0.99, "type": "monotonic"})
    assert fired("monotonic-shard-key", _sk({"created": 1}, mono))
    assert not fired("monotonic-shard-key", _sk({"created": 1}, _kc()))


def test_jumbo_chunk_risk():
    low = _kc(numDistinctValues=3, mostCommonValues=[{"value": {"k": "a"}, "frequency": 5000}])
    found = fired("jumbo-chunk-risk", _sk({"status": 1}, low))
    assert found and found[0].severity == "high"
    assert not fired("jumbo-chunk-risk", _sk({"status": 1}, _kc()))


def test_random_shard_key():
    assert fired("random-shard-key", _sk({"uid": 1}, _kc(), [{"uid": str(uuid.uuid4())} for _ in range(30)]))
    assert not fired("random-shard-key", _sk({"uid": 1}, _kc(), [{"uid": i} for i in range(30)]))
    assert not fired("random-shard-key", _sk({"uid": "hashed"}, _kc(), [{"uid": str(uuid.uuid4())} for _ in range(30)]))


@pytest.mark.parametrize("share,expected", [(80.0, True), (10.0, False)])
def test_scatter_gather_reads(share, expected):
    analysis = {"readDistribution": {"sampleSize": {"total": 100}, "percentageOfScatterGatherReads": share}}
    assert bool(fired("scatter-gather-reads", _sk({"a": 1}, analysis))) is expected
