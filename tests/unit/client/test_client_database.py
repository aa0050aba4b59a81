"""Database and MongoClient: commands, listing, creating and dropping, sessions, names."""
from __future__ import annotations

import bson
import pytest
from bson.codec_options import CodecOptions
from bson.dbref import DBRef
from bson.son import SON
from pymongo.errors import (
    CollectionInvalid,
    ConfigurationError,
    InvalidName,
    InvalidOperation,
    OperationFailure,
)
from pymongo.write_concern import WriteConcern
from support.client_fakes import cursor_reply, error_reply

from ginkgodb.client import MongoClient


def test_command_accepts_a_name_or_a_document_and_decodes_the_reply(client, channel):
    channel.on("ping", {"ok": 1.0})
    assert client.admin.command("ping") == {"ok": 1.0}
    assert channel.last == {"ping": 1, "$db": "admin"}
    client.db.command(SON([("collStats", "c"), ("scale", 1024)]), comment="x")
    assert channel.last == {"collStats": "c", "scale": 1024, "comment": "x", "$db": "db"}


def test_command_reply_uses_requested_codec_options(client, channel):
    channel.on("dbStats", {"db": "db", "sub": {"a": 1}, "ok": 1.0})
    reply = client.db.command("dbStats", codec_options=CodecOptions(document_class=SON))
    assert isinstance(reply, SON) and isinstance(reply["sub"], SON)


def test_command_error_raises_operation_failure_unless_check_is_false(client, channel):
    channel.on("nope", error_reply(59, "no such command: 'nope'", "CommandNotFound"))
    with pytest.raises(OperationFailure) as info:
        client.db.command("nope")
    assert info.value.code == 59 and info.value.details["errmsg"] == "no such command: 'nope'"
    assert client.db.command("nope", check=False)["ok"] == 0.0
    assert client.db.command("nope", allowable_errors=[59])["code"] == 59


def test_list_collection_names_sends_name_only_and_reads_the_cursor(client, channel):
    channel.on("listCollections", cursor_reply([{"name": "a"}, {"name": "b"}], ns="db.$cmd"))
    assert client.db.list_collection_names() == ["a", "b"]
    assert channel.last == {"listCollections": 1, "cursor": {}, "nameOnly": True, "$db": "db"}
    client.db.list_collection_names(filter={"type": "view"})
    assert channel.last["filter"] == {"type": "view"} and "nameOnly" not in channel.last


def test_create_collection_checks_existence_and_sends_options(client, channel):
    channel.on("listCollections", cursor_reply([]))
    coll = client.db.create_collection("c", capped=True, size=1024, collation={"locale": "en"})
    assert coll.name == "c"
    assert channel.last == {"create": "c", "capped": True, "size": 1024.0,
                            "collation": {"locale": "en"}, "$db": "db"}
    channel.on("listCollections", cursor_reply([{"name": "c"}]))
    with pytest.raises(CollectionInvalid, match="collection c already exists"):
        client.db.create_collection("c")


def test_drop_collection_tolerates_a_missing_namespace(client, channel):
    channel.on("drop", error_reply(26, "ns not found", "NamespaceNotFound"))
    client.db.drop_collection("c")
    client.db.c.drop()
    assert channel.named("drop")[0] == {"drop": "c", "$db": "db"}


def test_drop_database_sends_comment_null_like_pymongo(client, channel):
    client.drop_database("db")
    assert channel.last == {"dropDatabase": 1, "comment": None, "$db": "db"}
    with pytest.raises(TypeError):
        client.drop_database(1)


def test_list_database_names(client, channel):
    channel.on("listDatabases", {"databases": [{"name": "admin"}, {"name": "db"}], "ok": 1.0})
    assert client.list_database_names() == ["admin", "db"]
    assert channel.last == {"listDatabases": 1, "nameOnly": True, "$db": "admin"}


def test_server_info_is_build_info(client, channel):
    channel.on("buildinfo", {"version": "7.0.14", "versionArray": [7, 0, 14, 0], "ok": 1.0})
    assert client.server_info()["version"] == "7.0.14"


def test_write_concern_error_raises_on_drop(client, channel):
    channel.on("drop", {"ok": 1.0, "writeConcernError": {"code": 64, "errmsg": "waiting",
                                                         "errInfo": {"wtimeout": True}}})
    with pytest.raises(OperationFailure) as info:
        client.db.drop_collection("c")
    assert info.value.code == 64 and info.value.timeout


def test_rename_runs_on_admin_with_full_names(client, channel):
    client.db.c.rename("d", dropTarget=True)
    assert channel.last == {"renameCollection": "db.c", "to": "db.d", "dropTarget": True,
                            "$db": "admin"}
    with pytest.raises(InvalidName):
        client.db.c.rename("a$b")


def test_options_returns_creation_options(client, channel):
    channel.on("listCollections", cursor_reply([{"name": "c", "options": {"capped": True}}]))
    assert client.db.c.options() == {"capped": True}


def test_names_are_validated_like_pymongo(client):
    with pytest.raises(InvalidName, match="database names cannot contain"):
        client["a.b"]
    with pytest.raises(InvalidName, match="collection names cannot be empty"):
        client.db[""]
    with pytest.raises(InvalidName, match="must not contain '\\$'"):
        client.db["a$b"]
    with pytest.raises(AttributeError, match="use database\\['_x'\\]"):
        client.db._x  # noqa: B018


def test_sub_collections_and_settings_inheritance(client):
    wc = WriteConcern(w=1)
    db = client.get_database("db", write_concern=wc)
    assert db.a.b.full_name == "db.a.b" and db.a.b.write_concern is wc
    assert db.with_options(codec_options=CodecOptions(tz_aware=True)).codec_options.tz_aware
    assert client.db == client["db"] and client.db.a == client.db["a"]


def test_truth_testing_is_refused_as_in_pymongo(client):
    with pytest.raises(NotImplementedError):
        bool(client.db)
    with pytest.raises(NotImplementedError):
        bool(client.db.c)


def test_dereference_finds_by_id_in_this_database(client, channel):
    channel.on("find", cursor_reply([{"_id": 1}]))
    assert client.db.dereference(DBRef("c", 1)) == {"_id": 1}
    assert channel.last["find"] == "c" and channel.last["filter"] == {"_id": 1}
    with pytest.raises(ValueError):
        client.db.dereference(DBRef("c", 1, "other"))


def test_explicit_session_adds_lsid_and_belongs_to_its_client(client, channel):
    with client.start_session() as session:
        client.db.c.insert_one({}, session=session)
        assert channel.last["lsid"] == session.session_id
        other = MongoClient(_channel=channel)
        with pytest.raises(InvalidOperation, match="Can only use session with the MongoClient"):
            other.db.c.insert_one({}, session=session)
    with pytest.raises(InvalidOperation, match="Cannot use ended session"):
        client.db.c.insert_one({}, session=session)


def test_transactions_send_pymongos_commands(client, channel):
    """The session sends what pymongo sends: the transaction fields on the first operation,
    txnNumber/autocommit on the next, the transaction's write concern on commit only."""
    session = client.start_session()
    session.start_transaction(write_concern=WriteConcern(w="majority"))
    assert session.in_transaction
    client.db.c.insert_one({"_id": 1}, session=session)
    client.db.c.insert_one({"_id": 2}, session=session)
    session.commit_transaction()
    assert not session.in_transaction
    first, second = channel.named("insert")
    assert first["startTransaction"] is True and first["autocommit"] is False
    assert "startTransaction" not in second and second["txnNumber"] == first["txnNumber"] == 1
    assert "writeConcern" not in first and "writeConcern" not in second
    (commit,) = channel.named("commitTransaction")
    assert commit["$db"] == "admin" and commit["txnNumber"] == 1 and commit["autocommit"] is False
    assert commit["writeConcern"] == {"w": "majority"} and commit["lsid"] == first["lsid"]


def test_transaction_refused_by_the_server_side_is_reported(client, channel):
    """Against a standalone the first operation fails with 20; abort then sends abortTransaction."""
    channel.on("insert", error_reply(20, "Transaction numbers are only allowed on a replica set "
                                         "member or mongos", "IllegalOperation"))
    session = client.start_session()
    session.start_transaction()
    with pytest.raises(OperationFailure) as info:
        client.db.c.insert_one({"_id": 1}, session=session)
    assert info.value.code == 20
    session.abort_transaction()
    assert not session.in_transaction and len(channel.named("abortTransaction")) == 1


def test_transaction_state_errors_match_pymongo(client, channel):
    session = client.start_session()
    with pytest.raises(InvalidOperation, match="No transaction started"):
        session.commit_transaction()
    session.start_transaction()
    with pytest.raises(InvalidOperation, match="Transaction already in progress"):
        session.start_transaction()
    session.commit_transaction()  # nothing ran: no command is sent
    assert channel.named("commitTransaction") == []
    with pytest.raises(InvalidOperation, match="after calling commitTransaction"):
        session.abort_transaction()


def test_explicit_session_with_unacknowledged_write_is_refused(client):
    coll = client.db.get_collection("c", write_concern=WriteConcern(w=0))
    with pytest.raises(ConfigurationError, match="Explicit sessions are incompatible"):
        coll.insert_one({}, session=client.start_session())


def test_watch_sends_the_change_stream_aggregate_as_pymongo(client, channel):
    token = {"_data": "82AB"}
    channel.on("aggregate", {"cursor": {"firstBatch": [], "postBatchResumeToken": token,
                                        "id": bson.Int64(5), "ns": "db.c"}, "ok": 1.0})
    stream = client.db.c.watch([{"$match": {"operationType": "insert"}}], full_document="updateLookup",
                               max_await_time_ms=250, batch_size=3)
    assert channel.last == {"aggregate": "c", "pipeline": [
        {"$changeStream": {"fullDocument": "updateLookup"}}, {"$match": {"operationType": "insert"}}],
        "cursor": {"batchSize": 3}, "$db": "db"}
    assert stream.resume_token == token and stream.alive
    channel.on("getMore", {"cursor": {"nextBatch": [], "postBatchResumeToken": token, "id": bson.Int64(5),
                                      "ns": "db.c"}, "ok": 1.0})
    assert stream.try_next() is None
    assert channel.last == {"getMore": bson.Int64(5), "collection": "c", "batchSize": 3, "maxTimeMS": 250,
                            "$db": "db"}
    client.watch(start_after=token)
    assert channel.last["pipeline"] == [{"$changeStream": {"startAfter": token, "allChangesForCluster": True}}]
    assert channel.last["aggregate"] == 1 and channel.last["$db"] == "admin"
    client.db.watch()
    assert channel.last["aggregate"] == 1 and channel.last["$db"] == "db"


def test_client_bulk_write_is_not_supported(client):
    with pytest.raises(InvalidOperation, match="8.0"):
        client.bulk_write([])


def test_closed_client_refuses_operations(channel):
    client = MongoClient(_channel=channel)
    client.close()
    client.close()
    with pytest.raises(InvalidOperation, match="Cannot use MongoClient after close"):
        client.db.c.find_one()


def test_client_properties(client):
    assert client.address is None and client.is_primary and not client.is_mongos
    assert client.path is None
    with pytest.raises(ConfigurationError):
        client.get_default_database()
    assert client.get_default_database("x").name == "x"
    with pytest.raises(TypeError, match="not iterable"):
        next(client)


def test_snapshot_session_reads_carry_snapshot_read_concern(client, channel):
    channel.on("find", {"cursor": {"firstBatch": [], "id": 0, "ns": "db.c",
                                   "atClusterTime": 5}, "ok": 1.0})
    channel.on("distinct", {"values": [], "ok": 1.0})
    session = client.start_session(snapshot=True)
    client.db.c.find_one({}, session=session)
    assert channel.last["readConcern"] == {"level": "snapshot"}
    client.db.c.distinct("x", session=session)
    assert channel.last["readConcern"] == {"level": "snapshot", "atClusterTime": 5}
    client.db.c.insert_one({}, session=session)
    assert "readConcern" not in channel.last


def test_causally_consistent_session_reads_after_its_last_operation_time(client, channel):
    channel.on("insert", {"n": 1, "operationTime": 7, "ok": 1.0})
    with client.start_session(causal_consistency=True) as session:
        client.db.c.insert_one({}, session=session)
        client.db.c.count_documents({}, session=session)
        assert channel.last["readConcern"] == {"afterClusterTime": 7}
        assert session.operation_time == 7
