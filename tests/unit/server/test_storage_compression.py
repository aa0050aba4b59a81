"""`ginkgodb serve --storageCompression` and the embedded client's storageCompression: the default
codec of new collections, over the wire and embedded."""
from __future__ import annotations

import pymongo
import pytest

from ginkgodb import MongoClient
from ginkgodb.cli import _parser
from ginkgodb.server import ServerConfig
from ginkgodb.server.config_file import KEYS, ConfigFileError
from ginkgodb.server.testing import running_server

TEXT = "the quick brown fox jumps over the lazy dog " * 200


def test_the_flag_and_its_mongod_spelling_parse():
    assert _parser().parse_args(["serve", "--storageCompression", "zstd"]).storage_compression == "zstd"
    assert _parser().parse_args(["serve", "--wiredTigerCollectionBlockCompressor", "zlib"]).storage_compression == "zlib"
    assert _parser().parse_args(["serve"]).storage_compression == "none"
    with pytest.raises(SystemExit):
        _parser().parse_args(["serve", "--storageCompression", "lz4"])


def test_the_configuration_file_keys():
    for key in ("storage.wiredTiger.collectionConfig.blockCompressor", "storage.ginkgodb.compression"):
        dest, read = KEYS[key]
        assert dest == "storage_compression" and read(key, "snappy") == "snappy"
        with pytest.raises(ConfigFileError):
            read(key, "lz4")


def test_a_server_with_a_default_codec_compresses_new_collections(tmp_path):
    with running_server(str(tmp_path / "data"), storage_compression="zstd") as (host, port):
        client = pymongo.MongoClient(host, port, serverSelectionTimeoutMS=10_000)
        try:
            client.t.c.insert_many([{"_id": i, "t": TEXT} for i in range(20)])
            client.t.create_collection("plain", storageEngine={"ginkgodb": {"compression": "none"}})
            client.t.plain.insert_many([{"_id": i, "t": TEXT} for i in range(20)])
            packed, plain = client.t.command("collStats", "c"), client.t.command("collStats", "plain")
            assert packed["size"] == plain["size"] and packed["storageSize"] < plain["storageSize"] // 5
            assert [d["t"] for d in client.t.c.find()] == [TEXT] * 20
            parsed = client.admin.command("getCmdLineOpts")["parsed"]
            assert parsed["storage"]["ginkgodb"] == {"compression": "zstd"}
        finally:
            client.close()
    assert ServerConfig(dbpath=None, storage_compression="zlib").storage_options() == {"compression": "zlib"}


def test_the_embedded_client_option(tmp_path):
    path = str(tmp_path / "data")
    with MongoClient(path, storageCompression="snappy") as client:
        client.t.c.insert_one({"_id": 1, "t": TEXT})
        stats = client.t.command("collStats", "c")
        assert stats["storageSize"] < stats["size"] // 5
        with pytest.raises(pymongo.errors.ConfigurationError, match="already open"):
            MongoClient(path, storageCompression="zlib")
        with MongoClient(path) as second:   # no preference: shares the open engine
            assert second.t.c.find_one()["t"] == TEXT
    with MongoClient(path) as client:   # reopened with the default "none": the codec stays the collection's
        client.t.c.insert_one({"_id": 2, "t": TEXT})
        assert client.t.command("collStats", "c")["storageSize"] < 2 * len(TEXT) // 5
