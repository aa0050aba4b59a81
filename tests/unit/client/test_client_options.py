"""MongoClient arguments, shared engines per data directory, index helpers, reply checking."""
from __future__ import annotations

import pytest
from bson.binary import UuidRepresentation
from bson.son import SON
from pymongo import ASCENDING, DESCENDING, HASHED, IndexModel
from pymongo.errors import (
    ConfigurationError,
    CursorNotFound,
    DuplicateKeyError,
    ExecutionTimeout,
    NotPrimaryError,
    OperationFailure,
)
from pymongo.read_preferences import ReadPreference
from support.client_fakes import cursor_reply, error_reply

from ginkgodb.client import MongoClient, engines
from ginkgodb.client.options import parse_target
from ginkgodb.client.raising import check_command_reply


def test_targets_memory_paths_and_scheme():
    assert parse_target(None) is None and parse_target(":memory:") is None
    assert parse_target("./data") == "./data"
    assert parse_target("ginkgodb:///tmp/x") == "/tmp/x"
    assert parse_target("ginkgodb://:memory:") is None


def test_server_uri_is_refused_with_a_pointer_to_pymongo():
    with pytest.raises(ConfigurationError, match="pymongo.MongoClient"):
        MongoClient("mongodb://localhost:27017")


def test_unknown_option_is_a_configuration_error_and_network_options_are_accepted(channel):
    with pytest.raises(ConfigurationError, match="Unknown option: colour"):
        MongoClient(colour="red", _channel=channel)
    MongoClient(serverSelectionTimeoutMS=10, retryWrites=False, appname="x", _channel=channel)


def test_codec_and_concern_options_are_honoured(channel):
    client = MongoClient(document_class=SON, tz_aware=True, uuidRepresentation="standard",
                         w=0, readPreference="secondaryPreferred", readConcernLevel="local",
                         _channel=channel)
    opts = client.codec_options
    assert opts.document_class is SON and opts.tz_aware
    assert opts.uuid_representation == UuidRepresentation.STANDARD
    assert client.write_concern.document == {"w": 0}
    assert client.read_preference == ReadPreference.SECONDARY_PREFERRED
    assert client.read_concern.level == "local"


def test_bad_option_values_raise_pymongos_errors(channel):
    with pytest.raises(ValueError, match="invalid UUID representation"):
        MongoClient(uuidRepresentation="nope", _channel=channel)
    with pytest.raises(TypeError, match="document_class must be"):
        MongoClient(document_class=list, _channel=channel)
    with pytest.raises(TypeError, match="tz_aware must be True or False"):
        MongoClient(tz_aware=1, _channel=channel)


def test_one_directory_has_one_engine_until_its_last_release(tmp_path):
    path = str(tmp_path / "data")
    first, key = engines.acquire(path)
    second, same_key = engines.acquire(str(tmp_path / "." / "data"))
    assert first is second and key == same_key and engines.open_count(path) == 2
    engines.release(first, key)
    assert engines.open_count(path) == 1
    engines.release(second, key)
    assert engines.open_count(path) == 0
    third, key = engines.acquire(path)
    assert third is not first
    engines.release(third, key)


def test_in_memory_engines_are_never_shared():
    a, key_a = engines.acquire(None)
    b, key_b = engines.acquire(None)
    assert a is not b and key_a is key_b is None
    engines.release(a, key_a)
    engines.release(b, key_b)


def test_create_index_sends_index_model_documents(coll, channel):
    assert coll.create_index([("a", ASCENDING), ("b", DESCENDING)], unique=True) == "a_1_b_-1"
    assert channel.last == {"createIndexes": "coll",
                            "indexes": [{"unique": True, "name": "a_1_b_-1",
                                         "key": {"a": 1, "b": -1}}], "$db": "db"}
    assert coll.create_index("h", name="hh", expireAfterSeconds=5) == "hh"
    names = coll.create_indexes([IndexModel([("x", HASHED)]), IndexModel("y", sparse=True)])
    assert names == ["x_hashed", "y_1"]
    with pytest.raises(TypeError, match="not an instance of pymongo.operations.IndexModel"):
        coll.create_indexes([{"key": {"a": 1}}])


def test_drop_index_by_name_or_key_spec_and_drop_all(coll, channel):
    coll.drop_index("a_1")
    assert channel.last == {"dropIndexes": "coll", "index": "a_1", "$db": "db"}
    coll.drop_index([("a", 1), ("b", -1)])
    assert channel.last["index"] == "a_1_b_-1"
    coll.drop_indexes()
    assert channel.last["index"] == "*"
    with pytest.raises(TypeError, match="index_or_name must be an instance of str or list"):
        coll.drop_index({"a": 1})


def test_list_indexes_and_index_information(coll, channel):
    specs = [{"v": 2, "key": {"_id": 1}, "name": "_id_"},
             {"v": 2, "key": {"a": 1, "b": -1}, "name": "a_1_b_-1", "unique": True}]
    channel.on("listIndexes", cursor_reply(specs, ns="db.coll"))
    indexes = list(coll.list_indexes())
    assert isinstance(indexes[0], SON) and indexes[1]["name"] == "a_1_b_-1"
    info = coll.index_information()
    assert info["a_1_b_-1"] == {"v": 2, "key": [("a", 1), ("b", -1)], "unique": True}


def test_list_indexes_of_a_missing_collection_is_empty(coll, channel):
    channel.on("listIndexes", error_reply(26, "ns does not exist", "NamespaceNotFound"))
    assert list(coll.list_indexes()) == []


@pytest.mark.parametrize("code, exc_type", [(11000, DuplicateKeyError), (50, ExecutionTimeout),
                                            (43, CursorNotFound), (10107, NotPrimaryError),
                                            (2, OperationFailure)])
def test_error_replies_map_to_pymongos_exception_classes(code, exc_type):
    with pytest.raises(exc_type) as info:
        check_command_reply(error_reply(code, "boom"))
    assert type(info.value) is exc_type


def test_allowable_errors_match_code_or_message():
    check_command_reply(error_reply(26, "ns not found"), allowable_errors=[26])
    check_command_reply({"ok": 0.0, "errmsg": "ns not found"}, allowable_errors=["ns not found"])
    with pytest.raises(OperationFailure):
        check_command_reply({"errmsg": "no ok field"})
