"""The lean paths (find_one without a Cursor, writes with per-collection precomputed settings)
send the same commands and give the same results as the general paths they short-cut."""
from __future__ import annotations

import datetime
import uuid

import bson
import pytest
from bson.binary import Binary
from bson.codec_options import TypeEncoder, TypeRegistry
from bson.int64 import Int64
from bson.raw_bson import RawBSONDocument
from bson.son import SON
from pymongo.errors import OperationFailure, WriteError
from pymongo.read_concern import ReadConcern
from support.client_fakes import FakeChannel, cursor_reply, error_reply

from ginkgodb.client import MongoClient

WHEN = datetime.datetime(2024, 5, 1, 12, 0)


def _find_one_both_ways(coll, channel, filter):
    """The command find_one(filter) sends, and the one the Cursor path sends for it."""
    coll.find_one(filter)
    quick = channel.last
    next(iter(coll.find(filter).limit(-1)), None)
    return quick, channel.last


@pytest.mark.parametrize("filter", [None, {}, {"_id": 1}, {"a": {"$gt": 2}, "b": [1, (2, 3)]},
                                    {"query": 1}, {"$query": {"a": 1}}, SON([("a", 1)])])
def test_find_one_sends_what_the_cursor_path_sends(coll, channel, filter):
    quick, general = _find_one_both_ways(coll, channel, filter)
    assert quick == general


def test_find_one_with_read_concern_sends_what_the_cursor_path_sends(client, channel):
    coll = client.db.get_collection("c", read_concern=ReadConcern("majority"))
    quick, general = _find_one_both_ways(coll, channel, {"a": 1})
    assert quick == general and quick["readConcern"] == {"level": "majority"}


def test_find_one_filter_values_are_normalised_as_the_wire_would():
    channel = FakeChannel()
    client = MongoClient(uuidRepresentation="standard", _channel=channel)
    value = uuid.UUID(int=7)
    client.db.c.find_one({"u": value, "t": (1, 2), "s": SON([("x", 1)]), "big": 2 ** 40,
                          "when": WHEN.replace(tzinfo=datetime.UTC)})
    sent = channel.last["filter"]
    assert sent == {"u": Binary.from_uuid(value), "t": [1, 2], "s": {"x": 1}, "big": 2 ** 40,
                    "when": WHEN}
    assert type(sent["s"]) is dict and type(sent["big"]) is Int64 and sent["when"].tzinfo is None


def test_find_one_does_not_share_the_callers_filter(coll, channel):
    filter = {"tags": {"$in": ["a"]}}
    coll.find_one(filter)
    filter["tags"]["$in"].append("b")
    assert channel.last["filter"] == {"tags": {"$in": ["a"]}}


@pytest.mark.parametrize("options, check", [
    ({"tz_aware": True}, lambda doc: doc["t"].tzinfo is not None),
    ({"document_class": SON}, lambda doc: type(doc) is SON and type(doc["sub"]) is SON),
    ({"document_class": RawBSONDocument}, lambda doc: type(doc) is RawBSONDocument),
    ({}, lambda doc: type(doc) is dict and doc["t"] == WHEN and doc["t"].tzinfo is None),
])
def test_find_one_results_follow_the_codec_options(options, check):
    channel = FakeChannel()
    channel.on("find", cursor_reply([{"_id": 1, "t": WHEN, "sub": {"a": 1}}]))
    doc = MongoClient(_channel=channel, **options).db.c.find_one({"_id": 1})
    assert check(doc) and doc["_id"] == 1


def test_find_one_closes_a_cursor_the_engine_left_open(coll, channel):
    channel.on("find", cursor_reply([{"_id": 1}], cursor_id=77, ns="db.coll"))
    assert coll.find_one({"_id": 1}) == {"_id": 1}
    kill = channel.named("killCursors")
    assert kill == [{"killCursors": "coll", "cursors": [77], "$db": "db"}]


def test_find_one_raises_the_engines_error(coll, channel):
    channel.on("find", error_reply(2, "bad query", "BadValue"))
    with pytest.raises(OperationFailure, match="bad query") as info:
        coll.find_one({"$bad": 1})
    assert info.value.code == 2


def test_find_one_on_a_closed_client_raises_before_encoding(client):
    client.close()
    with pytest.raises(Exception, match="after close"):
        client.db.c.find_one({"bad": object()})


def test_updates_and_deletes_normalise_their_filters_and_specs():
    channel = FakeChannel()
    coll = MongoClient(uuidRepresentation="standard", _channel=channel).db.c
    value = uuid.UUID(int=3)
    coll.update_one({"u": value}, {"$set": {"t": (1,)}})
    assert channel.last["updates"] == [{"q": {"u": Binary.from_uuid(value)},
                                        "u": {"$set": {"t": [1]}}, "multi": False,
                                        "upsert": False}]
    coll.delete_one({"t": (1, 2)})
    assert channel.last["deletes"] == [{"q": {"t": [1, 2]}, "limit": 1}]
    coll.find_one_and_update({"t": (3,)}, {"$inc": {"n": 1}})
    assert channel.last["query"] == {"t": [3]}


def test_insert_one_hands_over_the_document_encoded_with_codec_options():
    channel = FakeChannel()
    coll = MongoClient(uuidRepresentation="standard", _channel=channel).db.c
    value = uuid.UUID(int=5)
    result = coll.insert_one({"u": value})
    (doc,) = channel.last["documents"]
    assert isinstance(doc, RawBSONDocument)
    assert bson.decode(doc.raw) == {"_id": result.inserted_id, "u": Binary.from_uuid(value)}


def _bad_utf8_document() -> RawBSONDocument:
    good = bson.encode({"s": "ab"})
    return RawBSONDocument(good.replace(b"ab", b"\xff\xfe"))


def test_a_batch_is_decoded_with_the_codec_options(channel):
    channel.on("find", cursor_reply([{"_id": i, "t": WHEN, "sub": {"a": i}} for i in range(3)]))
    client = MongoClient(tz_aware=True, document_class=SON, _channel=channel)
    docs = list(client.db.c.find())
    assert [d["_id"] for d in docs] == [0, 1, 2]
    assert all(type(d) is SON and type(d["sub"]) is SON and d["t"].tzinfo for d in docs)


def test_an_undecodable_document_fails_where_it_is_in_the_batch(coll, channel):
    batch = [RawBSONDocument(bson.encode({"_id": 1})), _bad_utf8_document(),
             RawBSONDocument(bson.encode({"_id": 3}))]
    channel.on("find", {"cursor": {"firstBatch": batch, "id": Int64(0), "ns": "db.coll"},
                        "ok": 1.0})
    cursor = coll.find()
    assert next(cursor) == {"_id": 1}
    with pytest.raises(bson.errors.InvalidBSON):
        next(cursor)
    assert next(cursor) == {"_id": 3}


def test_unicode_decode_error_handler_applies_to_batches(channel):
    channel.on("find", {"cursor": {"firstBatch": [_bad_utf8_document()], "id": Int64(0),
                                   "ns": "db.coll"}, "ok": 1.0})
    client = MongoClient(unicode_decode_error_handler="replace", _channel=channel)
    assert client.db.coll.find().to_list() == [{"s": "\ufffd\ufffd"}]


class _Unused:
    """A type with a custom encoder: its registry makes a collection take the general paths."""


def _general_collection(channel, **options):
    class Encoder(TypeEncoder):
        python_type = _Unused

        def transform_python(self, value):
            return 0

    client = MongoClient(_channel=channel, type_registry=TypeRegistry([Encoder()]), **options)
    return client.db.coll


LEAN_CALLS = [
    lambda c: c.update_one({"_id": 1}, {"$set": {"a": (1, 2)}}),
    lambda c: c.update_one({"_id": 1}, {"$set": {"a": 1}}, upsert=True),
    lambda c: c.update_many({"a": {"$gt": 1}}, [{"$set": {"b": 2}}]),
    lambda c: c.replace_one({"_id": 1}, {"x": SON([("b", 1)])}),
    lambda c: c.delete_one({"_id": 1}),
    lambda c: c.delete_many({}),
    lambda c: c.find_one_and_update({"_id": 1}, {"$inc": {"n": 1}}),
    lambda c: c.find_one_and_update({"_id": 1}, {"$inc": {"n": 1}}, upsert=True,
                                    return_document=True),
    lambda c: c.find_one_and_replace({"_id": 1}, {"n": 1}),
    lambda c: c.find_one_and_delete({"_id": 1}),
    lambda c: c.find_one({"_id": 2 ** 40}),
]


@pytest.mark.parametrize("call", LEAN_CALLS)
@pytest.mark.parametrize("w", [None, 0, 1])
def test_lean_paths_send_what_the_general_paths_send(call, w):
    options = {} if w is None else {"w": w}
    lean, general = FakeChannel(), FakeChannel()
    for channel in (lean, general):
        channel.on("findAndModify", {"lastErrorObject": {"n": 1},
                                     "value": RawBSONDocument(bson.encode({"_id": 1})),
                                     "ok": 1.0})
        channel.on("update", {"n": 1, "nModified": 1, "ok": 1.0})
    lean_result = call(MongoClient(_channel=lean, **options).db.coll)
    general_result = call(_general_collection(general, **options))
    assert lean.commands == general.commands
    assert _result_state(lean_result) == _result_state(general_result)


def _result_state(result):
    if result is None or isinstance(result, dict):
        return result
    return (type(result), result.acknowledged,
            result.raw_result if result.acknowledged else None)


def test_lean_update_reports_upserts_and_write_errors_as_the_general_path(coll, channel):
    channel.on("update", {"n": 1, "nModified": 0, "upserted": [{"index": 0, "_id": 9}],
                          "ok": 1.0})
    result = coll.update_one({"_id": 9}, {"$set": {"a": 1}}, upsert=True)
    assert result.upserted_id == 9 and result.raw_result["updatedExisting"] is False
    channel.on("delete", {"n": 0, "writeErrors": [{"index": 0, "code": 2, "errmsg": "bad"}],
                          "ok": 1.0})
    with pytest.raises(WriteError, match="bad"):
        coll.delete_one({"_id": 1})


def test_lean_writes_on_a_closed_client_raise_before_encoding(client):
    coll = client.db.c
    client.close()
    for call in (lambda: coll.update_one({"a": object()}, {"$set": {"b": 1}}),
                 lambda: coll.delete_one({"a": object()}),
                 lambda: coll.find_one_and_delete({"a": object()})):
        with pytest.raises(Exception, match="after close"):
            call()
