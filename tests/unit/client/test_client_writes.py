"""Single-document writes: the command documents sent and the results/exceptions built."""
from __future__ import annotations

import uuid

import bson
import pytest
from bson.binary import Binary, UuidRepresentation
from bson.codec_options import CodecOptions
from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument
from pymongo.errors import ConfigurationError, DuplicateKeyError, OperationFailure, WriteError
from pymongo.write_concern import WriteConcern
from support.client_fakes import error_reply


def test_insert_one_sends_one_encoded_document_and_sets_id_on_callers_dict(coll, channel):
    doc = {"a": 1}
    result = coll.insert_one(doc)
    assert isinstance(doc["_id"], ObjectId) and result.inserted_id == doc["_id"]
    assert result.acknowledged
    cmd = channel.last
    assert list(cmd) == ["insert", "ordered", "documents", "$db"]
    assert cmd["insert"] == "coll" and cmd["ordered"] is True and cmd["$db"] == "db"
    (sent,) = cmd["documents"]
    assert isinstance(sent, RawBSONDocument)
    assert bson.decode(sent.raw) == {"a": 1, "_id": doc["_id"]}


def test_insert_one_encodes_uuids_with_the_collections_representation(client, channel):
    coll = client.db.get_collection(
        "c", codec_options=CodecOptions(uuid_representation=UuidRepresentation.STANDARD))
    value = uuid.uuid4()
    coll.insert_one({"_id": 1, "u": value})
    assert bson.decode(channel.last["documents"][0].raw)["u"] == Binary.from_uuid(value)


def test_insert_one_with_unencodable_uuid_fails_like_pymongo(coll):
    with pytest.raises(ValueError, match="cannot encode native uuid.UUID"):
        coll.insert_one({"u": uuid.uuid4()})


def test_insert_one_duplicate_key_raises_duplicate_key_error_with_details(coll, channel):
    error = {"index": 0, "code": 11000, "errmsg": "E11000 duplicate key error",
             "keyPattern": {"_id": 1}, "keyValue": {"_id": 1}}
    channel.on("insert", {"n": 0, "writeErrors": [error], "ok": 1.0})
    with pytest.raises(DuplicateKeyError) as info:
        coll.insert_one({"_id": 1})
    assert info.value.code == 11000 and info.value.details["keyValue"] == {"_id": 1}


def test_insert_one_rejects_non_documents_with_pymongos_message(coll):
    with pytest.raises(TypeError, match="document must be an instance of dict"):
        coll.insert_one([("a", 1)])


def test_insert_one_sends_comment_and_bypass_validation(coll, channel):
    coll.insert_one({"_id": 1}, bypass_document_validation=True, comment={"why": "test"})
    assert channel.last["comment"] == {"why": "test"}
    assert channel.last["bypassDocumentValidation"] is True


def test_unacknowledged_insert_sends_w0_and_reports_not_acknowledged(client, channel):
    coll = client.db.get_collection("c", write_concern=WriteConcern(w=0))
    channel.on("insert", {"n": 0, "writeErrors": [{"index": 0, "code": 11000, "errmsg": "x"}],
                          "ok": 1.0})
    result = coll.insert_one({"_id": 1})
    assert channel.last["writeConcern"] == {"w": 0}
    assert result.acknowledged is False and result.inserted_id == 1


def test_update_one_builds_update_statement_and_reads_counts(coll, channel):
    channel.on("update", {"n": 1, "nModified": 1, "ok": 1.0})
    result = coll.update_one({"a": 1}, {"$set": {"b": 2}}, array_filters=[{"x.y": 1}],
                             hint=[("a", 1)], let={"v": 1}, comment="c")
    cmd = channel.last
    assert cmd["updates"] == [{"q": {"a": 1}, "u": {"$set": {"b": 2}}, "multi": False,
                               "upsert": False, "arrayFilters": [{"x.y": 1}], "hint": {"a": 1}}]
    assert cmd["let"] == {"v": 1} and cmd["comment"] == "c" and cmd["ordered"] is True
    assert (result.matched_count, result.modified_count, result.upserted_id) == (1, 1, None)


def test_update_upsert_reports_upserted_id(coll, channel):
    channel.on("update", {"n": 1, "nModified": 0, "upserted": [{"index": 0, "_id": 7}],
                          "ok": 1.0})
    result = coll.update_many({"a": 1}, [{"$set": {"b": 1}}], upsert=True)
    assert channel.last["updates"][0]["multi"] is True
    assert result.upserted_id == 7 and result.matched_count == 0
    assert result.raw_result["updatedExisting"] is False


def test_update_validation_messages_match_pymongo(coll):
    with pytest.raises(ValueError, match="update only works with \\$ operators"):
        coll.update_one({}, {"a": 1})
    with pytest.raises(ValueError, match="update cannot be empty"):
        coll.update_many({}, {})
    with pytest.raises(ValueError, match="replacement can not include \\$ operators"):
        coll.replace_one({}, {"$set": {"a": 1}})
    with pytest.raises(TypeError, match="filter must be an instance of dict"):
        coll.update_one([], {"$set": {"a": 1}})
    with pytest.raises(TypeError, match="upsert must be True or False"):
        coll.update_one({}, {"$set": {"a": 1}}, upsert=1)


def test_write_error_on_update_raises_write_error(coll, channel):
    channel.on("update", {"n": 0, "nModified": 0,
                          "writeErrors": [{"index": 0, "code": 66, "errmsg": "immutable"}],
                          "ok": 1.0})
    with pytest.raises(WriteError) as info:
        coll.replace_one({"_id": 1}, {"_id": 2})
    assert info.value.code == 66 and not isinstance(info.value, DuplicateKeyError)


def test_collation_with_unacknowledged_write_is_a_configuration_error(client):
    coll = client.db.get_collection("c", write_concern=WriteConcern(w=0))
    with pytest.raises(ConfigurationError, match="Collation is unsupported"):
        coll.delete_one({}, collation={"locale": "en"})


def test_delete_many_sends_limit_zero_and_reads_count(coll, channel):
    channel.on("delete", {"n": 3, "ok": 1.0})
    assert coll.delete_many({"a": 1}, hint="a_1").deleted_count == 3
    assert channel.last["deletes"] == [{"q": {"a": 1}, "limit": 0, "hint": "a_1"}]
    coll.delete_one({})
    assert channel.last["deletes"][0]["limit"] == 1


def test_command_failure_on_write_raises_operation_failure(coll, channel):
    channel.on("delete", error_reply(2, "bad hint", "BadValue"))
    with pytest.raises(OperationFailure) as info:
        coll.delete_one({}, hint="nope")
    assert info.value.code == 2 and info.value.details["codeName"] == "BadValue"


def test_find_one_and_update_builds_find_and_modify_and_decodes_value(coll, channel):
    channel.on("findAndModify", {"lastErrorObject": {"n": 1}, "value": {"_id": 1, "a": 2},
                                 "ok": 1.0})
    doc = coll.find_one_and_update({"_id": 1}, {"$inc": {"a": 1}}, projection=["a"],
                                   sort=[("a", -1)], upsert=True, return_document=True)
    assert doc == {"_id": 1, "a": 2}
    cmd = channel.last
    assert cmd["findAndModify"] == "coll" and cmd["query"] == {"_id": 1} and cmd["new"] is True
    assert cmd["update"] == {"$inc": {"a": 1}} and cmd["fields"] == {"a": 1}
    assert cmd["sort"] == {"a": -1} and cmd["upsert"] is True


def test_find_one_and_delete_sends_remove_and_returns_none_when_nothing_matched(coll, channel):
    channel.on("findAndModify", {"lastErrorObject": {"n": 0}, "value": None, "ok": 1.0})
    assert coll.find_one_and_delete({"x": 1}) is None
    assert channel.last["remove"] is True and channel.last["new"] is False


def test_find_one_and_update_duplicate_key_error(coll, channel):
    channel.on("findAndModify", error_reply(11000, "E11000 duplicate key error", "DuplicateKey"))
    with pytest.raises(DuplicateKeyError):
        coll.find_one_and_update({}, {"$set": {"a": 1}}, upsert=True)
