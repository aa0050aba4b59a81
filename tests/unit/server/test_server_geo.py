"""Geo indexes and queries over the wire, with pymongo, on a data directory (LMDB)."""
from __future__ import annotations

import pymongo
import pytest
from pymongo.errors import OperationFailure, WriteError

from ginkgodb.server.testing import running_server


def test_geo_over_the_wire(tmp_path):
    with running_server(str(tmp_path / "data"), quiet=True) as address:
        client = pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000)
        try:
            places = client.t.places
            places.insert_many([{"_id": i, "loc": {"type": "Point", "coordinates": [i * 0.01, 0]},
                                 "kind": "shop" if i % 2 else "cafe"} for i in range(200)])
            assert places.create_index([("loc", pymongo.GEOSPHERE)]) == "loc_2dsphere"
            spec = next(ix for ix in places.list_indexes() if ix["name"] == "loc_2dsphere")
            assert spec["2dsphereIndexVersion"] == 3

            near = {"$near": {"$geometry": {"type": "Point", "coordinates": [0.5, 0]},
                              "$maxDistance": 30_000}}
            got = [d["_id"] for d in places.find({"loc": near, "kind": "shop"})]
            assert got[0] in (49, 51) and sorted(got) == [i for i in range(24, 77) if i % 2]

            box = {"type": "Polygon", "coordinates": [[[0.095, -1], [0.205, -1], [0.205, 1],
                                                       [0.095, 1], [0.095, -1]]]}
            cursor = places.find({"loc": {"$geoWithin": {"$geometry": box}}})
            assert sorted(d["_id"] for d in cursor) == list(range(10, 21))
            plan = places.find({"loc": {"$geoWithin": {"$geometry": box}}}).explain()
            assert plan["queryPlanner"]["winningPlan"]["inputStage"]["stage"] == "IXSCAN"

            docs = list(places.aggregate([
                {"$geoNear": {"near": {"type": "Point", "coordinates": [0, 0]}, "distanceField": "d",
                              "query": {"kind": "cafe"}}},
                {"$limit": 3}]))
            assert [d["_id"] for d in docs] == [0, 2, 4]
            assert docs[1]["d"] == pytest.approx(2 * 0.01 * 3.141592653589793 / 180 * 6378100, rel=1e-6)

            with pytest.raises(WriteError) as err:
                places.insert_one({"_id": "bad", "loc": {"type": "Point", "coordinates": [0, 91]}})
            assert err.value.code == 16755
            assert places.count_documents({"_id": "bad"}) == 0

            assert list(client.t.missing.find({"loc": {"$near": [0, 0]}})) == []   # EOF, as mongod
            client.t.other.insert_one({"loc": [0, 0]})
            with pytest.raises(OperationFailure) as failure:
                list(client.t.other.find({"loc": {"$near": [0, 0]}}))
            assert failure.value.code == 291
        finally:
            client.close()
