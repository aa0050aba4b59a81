"""A time-series collection through pymongo over the wire, compared with an ordinary collection
holding the same measurements."""
from __future__ import annotations

import datetime

import pytest
from pymongo.errors import BulkWriteError, OperationFailure

T0 = datetime.datetime(2024, 6, 1)


def test_time_series_over_the_wire(db):
    db.create_collection("weather", timeseries={"timeField": "ts", "metaField": "sensor", "granularity": "minutes"},
                         expireAfterSeconds=86400 * 365 * 100)
    readings = [{"_id": i, "ts": T0 + datetime.timedelta(minutes=5 * i), "sensor": {"id": i % 3, "kind": "temp"},
                 "temp": 20 + (i % 7)} for i in range(600)]
    db.weather.insert_many(readings)
    db.plain.insert_many(readings)
    info = next(db.list_collections(filter={"name": "weather"}))
    assert info["type"] == "timeseries" and info["options"]["timeseries"]["bucketMaxSpanSeconds"] == 86400
    assert "system.buckets.weather" in db.list_collection_names()

    day = {"sensor.id": 1, "ts": {"$gte": T0 + datetime.timedelta(days=1), "$lt": T0 + datetime.timedelta(days=2)}}
    assert list(db.weather.find(day).sort("_id", 1)) == list(db.plain.find(day).sort("_id", 1))
    pipeline = [{"$match": {"sensor.id": 2}}, {"$group": {"_id": None, "avg": {"$avg": "$temp"}}}]
    assert list(db.weather.aggregate(pipeline)) == list(db.plain.aggregate(pipeline))
    assert db.weather.count_documents({"temp": {"$gt": 24}}) == db.plain.count_documents({"temp": {"$gt": 24}})

    plan = db.weather.find(day).explain()
    assert [next(iter(s)) for s in plan["stages"]] == ["$cursor", "$_internalUnpackBucket"]
    assert plan["stages"][0]["$cursor"]["queryPlanner"]["namespace"] == f"{db.name}.system.buckets.weather"

    stats = db.command("collStats", "weather")["timeseries"]
    assert stats["bucketCount"] == db["system.buckets.weather"].count_documents({}) > 0
    assert stats["numMeasurementsCommitted"] == 600

    assert db.weather.delete_many({"sensor.id": 0}).deleted_count == 200
    assert db.weather.update_many({"sensor.id": 1}, {"$set": {"sensor.kind": "hum"}}).modified_count == 200
    assert db.weather.count_documents({"sensor.kind": "hum"}) == 200

    with pytest.raises(BulkWriteError) as caught:
        db.weather.insert_many([{"ts": "yesterday"}])
    assert caught.value.details["writeErrors"][0]["code"] == 2
    with pytest.raises(OperationFailure) as failed:
        db.create_collection("bad", timeseries={"timeField": "t", "granularity": "weeks"})
    assert failed.value.code == 2
    db.weather.drop()
    assert "system.buckets.weather" not in db.list_collection_names()
