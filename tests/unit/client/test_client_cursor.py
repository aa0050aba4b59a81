"""Cursor: the find/getMore/killCursors documents, chaining rules, decoding of results."""
from __future__ import annotations

import datetime
import gc

import bson
import pytest
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from bson.son import SON
from pymongo import ASCENDING, DESCENDING
from pymongo.errors import CursorNotFound, ExecutionTimeout, InvalidOperation
from support.client_fakes import cursor_reply, error_reply

from ginkgodb.client import MongoClient


def _two_batches(channel, first=({"_id": 1}, {"_id": 2}), rest=({"_id": 3},), cursor_id=42):
    channel.on("find", cursor_reply(list(first), cursor_id, ns="db.coll"))
    channel.on("getMore", cursor_reply(list(rest), 0, ns="db.coll", first=False))


def test_find_sends_filter_and_options_as_pymongo_does(coll, channel):
    list(coll.find({"a": 1}, ["x"], skip=2, limit=5, sort=[("a", DESCENDING)], hint="a_1",
                   max_time_ms=100, comment="hello", allow_disk_use=True,
                   collation={"locale": "fr"}, return_key=True, let={"v": 1}))
    cmd = channel.named("find")[0]
    assert cmd == {"find": "coll", "filter": {"a": 1}, "sort": {"a": -1}, "hint": "a_1",
                   "let": {"v": 1}, "comment": "hello", "maxTimeMS": 100, "returnKey": True,
                   "projection": {"x": 1}, "skip": 2, "limit": 5, "collation": {"locale": "fr"},
                   "allowDiskUse": True, "$db": "db"}


def test_find_one_sends_limit_one_single_batch_and_wraps_non_mapping_filter(coll, channel):
    channel.on("find", cursor_reply([{"_id": 7}]))
    assert coll.find_one(7) == {"_id": 7}
    cmd = channel.last
    assert cmd["filter"] == {"_id": 7} and cmd["limit"] == 1 and cmd["singleBatch"] is True


def test_find_one_returns_none_when_nothing_matches(coll):
    assert coll.find_one({"nothing": True}) is None


def test_iteration_fetches_further_batches_with_get_more(coll, channel):
    _two_batches(channel)
    assert [d["_id"] for d in coll.find(batch_size=2)] == [1, 2, 3]
    get_more = channel.named("getMore")[0]
    assert get_more == {"getMore": 42, "collection": "coll", "batchSize": 2, "$db": "db"}
    assert isinstance(get_more["getMore"], bson.Int64)
    assert channel.named("killCursors") == []


def test_batch_size_equal_to_limit_is_sent_one_higher(coll, channel):
    list(coll.find(limit=3, batch_size=3))
    assert channel.last["batchSize"] == 4 and channel.last["limit"] == 3


def test_get_more_asks_only_for_what_the_limit_still_allows(coll, channel):
    _two_batches(channel)
    list(coll.find().limit(3).batch_size(2))
    assert channel.named("getMore")[0]["batchSize"] == 1


def test_close_kills_an_open_server_cursor(coll, channel):
    _two_batches(channel)
    cursor = coll.find(batch_size=2)
    next(cursor)
    cursor.close()
    assert channel.last == {"killCursors": "coll", "cursors": [42], "$db": "db"}
    assert next(cursor) == {"_id": 2}   # the buffered batch stays readable, as in pymongo
    assert not cursor.alive


def test_garbage_collected_cursor_is_killed_before_the_next_command(coll, channel):
    _two_batches(channel)
    cursor = coll.find(batch_size=2)
    next(cursor)
    del cursor
    gc.collect()
    assert channel.named("killCursors") == []
    coll.delete_one({})
    names = [next(iter(c)) for c in channel.commands]
    assert names[-2:] == ["killCursors", "delete"]


def test_options_cannot_change_after_the_query_ran(coll, channel):
    cursor = coll.find()
    list(cursor)
    with pytest.raises(InvalidOperation, match="cannot set options after executing query"):
        cursor.limit(1)
    with pytest.raises(InvalidOperation, match="cannot set options after executing query"):
        cursor.sort("a")


def test_sort_accepts_key_and_direction_list_and_mapping_forms(coll, channel):
    for spec in (coll.find().sort("a", DESCENDING), coll.find().sort([("a", 1), ("b", -1)]),
                 coll.find(sort={"a": 1})):
        list(spec)
    sorts = [c["sort"] for c in channel.named("find")]
    assert sorts == [{"a": -1}, {"a": 1, "b": -1}, {"a": 1}]


def test_argument_validation_matches_pymongo(coll):
    with pytest.raises(TypeError, match="skip must be an instance of int"):
        coll.find(skip="1")
    with pytest.raises(ValueError, match="batch_size must be >= 0"):
        coll.find().batch_size(-1)
    with pytest.raises(ValueError, match="skip must be >= 0"):
        coll.find().skip(-1)
    with pytest.raises(TypeError, match="filter must be an instance of dict"):
        coll.find([1])
    with pytest.raises(TypeError, match="projection must be a list of key names"):
        coll.find({}, [1])


def test_min_max_require_a_hint(coll):
    with pytest.raises(InvalidOperation, match="Passing a 'hint' is required"):
        list(coll.find().min([("a", 1)]))


def test_index_returns_one_document_via_skip_and_single_batch(coll, channel):
    channel.on("find", cursor_reply([{"_id": 9}]))
    assert coll.find().skip(1)[3] == {"_id": 9}
    cmd = channel.last
    assert cmd["skip"] == 4 and cmd["limit"] == 1 and cmd["singleBatch"] is True


def test_index_past_the_end_raises_index_error(coll):
    with pytest.raises(IndexError, match="no such item for Cursor instance"):
        coll.find()[5]


def test_slice_sets_skip_and_limit_and_empty_slice_sends_nothing(coll, channel):
    list(coll.find()[2:5])
    assert channel.last["skip"] == 2 and channel.last["limit"] == 3
    before = len(channel.commands)
    assert list(coll.find()[3:3]) == []
    assert len(channel.commands) == before
    with pytest.raises(IndexError):
        coll.find()[1:5:2]


def test_clone_and_rewind_run_the_query_again(coll, channel):
    channel.on("find", cursor_reply([{"_id": 1}]))
    cursor = coll.find({"a": 1}).limit(3)
    assert list(cursor) == [{"_id": 1}]
    assert list(cursor.clone()) == [{"_id": 1}]
    assert list(cursor.rewind()) == [{"_id": 1}]
    assert [c["limit"] for c in channel.named("find")] == [3, 3, 3]


def test_explain_wraps_the_find_command_and_returns_the_reply(coll, channel):
    channel.on("explain", {"queryPlanner": {"winningPlan": {"stage": "COLLSCAN"}}, "ok": 1.0})
    plan = coll.find({"a": 1}).limit(2).explain()
    assert plan["queryPlanner"]["winningPlan"]["stage"] == "COLLSCAN"
    cmd = channel.last
    assert cmd["explain"] == {"find": "coll", "filter": {"a": 1}, "limit": 2,
                              "singleBatch": True}


def test_cursor_not_found_on_get_more(coll, channel):
    channel.on("find", cursor_reply([{"_id": 1}], 42))
    channel.on("getMore", error_reply(43, "cursor id 42 not found", "CursorNotFound"))
    cursor = coll.find()
    next(cursor)
    with pytest.raises(CursorNotFound):
        next(cursor)
    assert not cursor.alive and channel.named("killCursors") == []


def test_max_time_expired_raises_execution_timeout(coll, channel):
    channel.on("find", error_reply(50, "operation exceeded time limit", "MaxTimeMSExpired"))
    with pytest.raises(ExecutionTimeout) as info:
        list(coll.find(max_time_ms=1))
    assert info.value.timeout


def test_to_list_honours_length(coll, channel):
    _two_batches(channel)
    cursor = coll.find()
    assert cursor.to_list(1) == [{"_id": 1}]
    assert cursor.to_list() == [{"_id": 2}, {"_id": 3}]
    with pytest.raises(ValueError):
        coll.find().to_list(0)


def test_results_are_decoded_with_the_collections_codec_options(client, channel):
    when = datetime.datetime(2024, 5, 1, 12, 0)
    channel.on("find", cursor_reply([{"_id": 1, "t": when, "sub": {"b": 1, "a": 2}}]))
    coll = client.db.get_collection("c", codec_options=CodecOptions(document_class=SON,
                                                                    tz_aware=True))
    doc = coll.find_one()
    assert isinstance(doc, SON) and isinstance(doc["sub"], SON)
    assert doc["t"].tzinfo is not None and doc["t"].replace(tzinfo=None) == when


def test_raw_bson_document_class_passes_documents_through(channel):
    channel.on("find", cursor_reply([{"_id": 1}]))
    client = MongoClient(document_class=RawBSONDocument, _channel=channel)
    doc = client.db.c.find_one()
    assert isinstance(doc, RawBSONDocument) and doc["_id"] == 1


def test_tz_aware_client_option_applies_to_results(channel):
    channel.on("find", cursor_reply([{"t": datetime.datetime(2020, 1, 1)}]))
    client = MongoClient(tz_aware=True, _channel=channel)
    assert client.db.c.find_one()["t"].tzinfo is not None


def test_distinct_from_cursor_uses_its_filter(coll, channel):
    channel.on("distinct", {"values": [1, 2], "ok": 1.0})
    assert coll.find({"a": {"$gt": 0}}).distinct("b") == [1, 2]
    assert channel.last["query"] == {"a": {"$gt": 0}} and channel.last["key"] == "b"


def test_cursor_properties(coll):
    cursor = coll.find()
    assert cursor.collection is coll and cursor.address is None and cursor.retrieved == 0
    assert cursor.alive and cursor.cursor_id is None
    with coll.find() as c:
        assert list(c) == []


def test_legacy_query_modifiers_in_filter_become_find_fields(coll, channel):
    list(coll.find({"$query": {"a": 1}, "$orderby": {"a": ASCENDING}}))
    cmd = channel.last
    assert cmd["filter"] == {"a": 1} and cmd["sort"] == {"a": 1}


def test_find_raw_batches_yields_each_batch_as_bson_bytes(coll, channel):
    _two_batches(channel)
    batches = list(coll.find_raw_batches(batch_size=2))
    assert [bson.decode_all(b) for b in batches] == [[{"_id": 1}, {"_id": 2}], [{"_id": 3}]]
    with pytest.raises(InvalidOperation):
        coll.find_raw_batches()[0]


def test_aggregate_raw_batches_starts_with_an_empty_first_batch(coll, channel):
    channel.on("aggregate", cursor_reply([], 8, ns="db.coll"))
    channel.on("getMore", cursor_reply([{"a": 1}, {"a": 2}], 0, ns="db.coll", first=False))
    batches = list(coll.aggregate_raw_batches([]))
    assert channel.named("aggregate")[0]["cursor"] == {"batchSize": 0}
    assert [bson.decode_all(b) for b in batches] == [[{"a": 1}, {"a": 2}]]
