"""aggregate, count_documents, estimated_document_count, distinct, CommandCursor."""
from __future__ import annotations

import uuid

import pytest
from bson.binary import Binary, UuidRepresentation
from bson.codec_options import CodecOptions
from pymongo.errors import ConfigurationError, OperationFailure
from pymongo.read_concern import ReadConcern
from pymongo.write_concern import WriteConcern
from support.client_fakes import cursor_reply, error_reply, raw


def test_aggregate_sends_pipeline_with_cursor_and_batch_size(coll, channel):
    channel.on("aggregate", cursor_reply([{"n": 1}], 9, ns="db.coll"))
    channel.on("getMore", cursor_reply([{"n": 2}], 0, ns="db.coll", first=False))
    cursor = coll.aggregate([{"$match": {}}], batchSize=1, allowDiskUse=True, let={"x": 1},
                            comment="c", collation={"locale": "en"})
    assert list(cursor) == [{"n": 1}, {"n": 2}]
    cmd = channel.named("aggregate")[0]
    assert cmd == {"aggregate": "coll", "pipeline": [{"$match": {}}], "allowDiskUse": True,
                   "let": {"x": 1}, "comment": "c", "cursor": {"batchSize": 1},
                   "collation": {"locale": "en"}, "$db": "db"}
    assert channel.named("getMore")[0]["batchSize"] == 2   # pymongo never asks for 1
    assert channel.named("getMore")[0]["comment"] == "c"


def test_aggregate_with_out_stage_is_a_write_without_batch_size(client, channel):
    coll = client.db.get_collection("c", write_concern=WriteConcern(w=1))
    list(coll.aggregate([{"$out": "other"}], batchSize=5))
    cmd = channel.last
    assert cmd["cursor"] == {} and cmd["writeConcern"] == {"w": 1}


def test_aggregate_rejects_explain_and_reserved_options(coll):
    with pytest.raises(ConfigurationError, match="explain option is not supported"):
        coll.aggregate([], explain=True)
    with pytest.raises(ConfigurationError, match="aggregate option cannot be specified"):
        coll.aggregate([], aggregate="x")
    with pytest.raises(TypeError, match="pipeline must be a list"):
        coll.aggregate({"$match": {}})


def test_aggregate_sends_read_concern_when_set(client, channel):
    coll = client.db.get_collection("c", read_concern=ReadConcern("majority"))
    list(coll.aggregate([]))
    assert channel.last["readConcern"] == {"level": "majority"}


def test_database_aggregate_targets_one_and_reads_cursor_namespace(client, channel):
    channel.on("aggregate", cursor_reply([{"a": 1}], 0, ns="db.$cmd.aggregate"))
    assert list(client.db.aggregate([{"$documents": [{"a": 1}]}])) == [{"a": 1}]
    assert channel.last["aggregate"] == 1


def test_count_documents_builds_match_skip_limit_group_pipeline(coll, channel):
    channel.on("aggregate", cursor_reply([{"_id": 1, "n": 4}]))
    assert coll.count_documents({"a": 1}, skip=1, limit=5, hint=[("a", 1)]) == 4
    cmd = channel.last
    assert cmd["pipeline"] == [{"$match": {"a": 1}}, {"$skip": 1}, {"$limit": 5},
                               {"$group": {"_id": 1, "n": {"$sum": 1}}}]
    assert cmd["hint"] == {"a": 1} and cmd["cursor"] == {}


def test_count_documents_is_zero_for_empty_result_and_missing_namespace(coll, channel):
    assert coll.count_documents({}) == 0
    channel.on("aggregate", error_reply(26, "ns does not exist", "NamespaceNotFound"))
    assert coll.count_documents({}) == 0


def test_estimated_document_count_sends_count_command(coll, channel):
    channel.on("count", {"n": 12, "ok": 1.0})
    assert coll.estimated_document_count(maxTimeMS=5) == 12
    assert channel.last == {"count": "coll", "maxTimeMS": 5, "$db": "db"}
    with pytest.raises(ConfigurationError, match="does not support sessions"):
        coll.estimated_document_count(session=None)


def test_distinct_sends_key_query_and_decodes_values_with_codec_options(client, channel):
    value = uuid.uuid4()
    channel.on("distinct", {"values": [Binary.from_uuid(value), raw({"a": 1})], "ok": 1.0})
    coll = client.db.get_collection(
        "c", codec_options=CodecOptions(uuid_representation=UuidRepresentation.STANDARD))
    assert coll.distinct("k", {"x": 1}) == [value, {"a": 1}]
    assert channel.last["key"] == "k" and channel.last["query"] == {"x": 1}
    with pytest.raises(TypeError, match="key must be an instance of str"):
        coll.distinct(1)
    with pytest.raises(ConfigurationError, match="can't pass both filter and query"):
        coll.distinct("k", {}, query={})


def test_command_cursor_try_next_and_batch_size(coll, channel):
    channel.on("aggregate", cursor_reply([], 3, ns="db.coll"))
    channel.on("getMore", cursor_reply([{"x": 1}], 3, ns="db.coll", first=False),
               cursor_reply([], 0, ns="db.coll", first=False))
    cursor = coll.aggregate([])
    assert cursor.try_next() == {"x": 1}
    assert cursor.try_next() is None and not cursor.alive
    with pytest.raises(ValueError):
        cursor.batch_size(-1)


def test_command_cursor_close_kills_server_cursor(coll, channel):
    channel.on("aggregate", cursor_reply([{"x": 1}], 3, ns="db.coll"))
    with coll.aggregate([]) as cursor:
        next(cursor)
    assert channel.last == {"killCursors": "coll", "cursors": [3], "$db": "db"}


def test_aggregate_error_raises_operation_failure(coll, channel):
    channel.on("aggregate", error_reply(40324, "Unrecognized pipeline stage name: '$foo'"))
    with pytest.raises(OperationFailure, match="Unrecognized pipeline stage") as info:
        coll.aggregate([{"$foo": {}}])
    assert info.value.code == 40324
