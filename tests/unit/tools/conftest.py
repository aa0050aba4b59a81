"""Running the tools in this process, as `ginkgodb <tool> ...` would."""
from __future__ import annotations

import datetime as dt
import os

import bson
import pytest
from bson import Decimal128, Int64, ObjectId
from bson.raw_bson import RawBSONDocument

from ginkgodb import MongoClient
from ginkgodb.cli import main

RAW = bson.CodecOptions(document_class=RawBSONDocument)
FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "mongodump_100")


class Tools:
    def __init__(self, capsys) -> None:
        self.capsys = capsys

    def __call__(self, *argv: str, expect: int = 0) -> tuple[str, str]:
        code = main([str(a) for a in argv])
        out, err = self.capsys.readouterr()
        assert code == expect, f"exit {code} (wanted {expect})\nstdout: {out}\nstderr: {err}"
        return out, err


@pytest.fixture
def tool(capsys):
    return Tools(capsys)


def raw_docs(coll) -> list[bytes]:
    return [d.raw for d in coll.with_options(codec_options=RAW).find().sort("_id", 1)]


def seed(path: str) -> None:
    """A data directory with several types, options, indexes and a view."""
    client = MongoClient(path)
    db = client.shop
    db.create_collection("people", validator={"$jsonSchema": {"required": ["name"]}},
                         collation={"locale": "fr", "strength": 2})
    db.people.insert_many([{"_id": i, "name": f"p{i}", "age": i % 90, "score": i / 7,
                            "big": Int64(i * 10 ** 12), "dec": Decimal128(f"{i}.25"),
                            "at": dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i),
                            "tags": ["a", {"b": i}], "oid": ObjectId(), "none": None}
                           for i in range(3000)])
    db.people.create_index([("name", 1), ("age", -1)], unique=True, name="name_age")
    db.people.create_index("score", sparse=True)
    db.create_collection("log", capped=True, size=1 << 20)
    db.log.insert_many([{"m": f"line {i}"} for i in range(10)])
    db.command("create", "adults", viewOn="people", pipeline=[{"$match": {"age": {"$gte": 18}}}])
    client.other.things.insert_one({"_id": "x", "v": 1})
    client.close()
