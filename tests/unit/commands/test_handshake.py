"""hello / isMaster: the standalone reply of mongod 7.0."""
from __future__ import annotations

import datetime

import pytest
from unit.commands.fake_server import FakeServer

from ginkgodb import limits, wire
from ginkgodb.commands import CommandContext, dispatch


def run(cmd, **ctx_fields):
    return dispatch(CommandContext(engine=None, **ctx_fields), cmd)


def test_hello_reports_a_writable_standalone_at_wire_version_21():
    reply = run({"hello": 1, "$db": "admin"}, connection_id=17)
    assert reply["isWritablePrimary"] is True and reply["ok"] == 1.0
    assert (reply["minWireVersion"], reply["maxWireVersion"]) == (0, 21)
    assert reply["logicalSessionTimeoutMinutes"] == 30
    assert reply["connectionId"] == 17
    assert reply["maxBsonObjectSize"] == 16 * 1024 * 1024
    assert reply["maxMessageSizeBytes"] == 48_000_000
    assert reply["maxWriteBatchSize"] == 100_000
    assert reply["readOnly"] is False
    assert isinstance(reply["localTime"], datetime.datetime)
    assert "setName" not in reply and "hosts" not in reply
    # a standalone's topologyVersion, as mongod 4.4+ reports it: its counter never moves
    assert set(reply["topologyVersion"]) == {"processId", "counter"} and reply["topologyVersion"]["counter"] == 0
    assert list(reply)[:2] == ["isWritablePrimary", "topologyVersion"]


@pytest.mark.parametrize("name", ["isMaster", "ismaster"])
def test_is_master_answers_ismaster_true(name):
    reply = run({name: 1, "$db": "admin"})
    assert reply["ismaster"] is True and "isWritablePrimary" not in reply


def test_hello_ok_is_echoed_only_when_asked():
    assert run({"hello": 1, "helloOk": True, "$db": "admin"})["helloOk"] is True
    assert "helloOk" not in run({"hello": 1, "$db": "admin"})


def test_compression_echo_is_the_supported_subset_in_client_order():
    reply = run({"hello": 1, "compression": ["zstd", "zlib", "snappy"], "$db": "admin"}, server=FakeServer())
    assert reply["compression"] == ["zlib", "snappy"]


def test_empty_compression_list_is_echoed_empty_and_absent_list_omitted():
    assert run({"hello": 1, "compression": [], "$db": "admin"}, server=FakeServer())["compression"] == []
    assert "compression" not in run({"hello": 1, "$db": "admin"}, server=FakeServer())


def test_embedded_hello_agrees_to_no_compression():
    assert run({"hello": 1, "compression": ["zlib"], "$db": "admin"})["compression"] == []


def test_client_metadata_may_only_be_sent_once_per_connection():
    reply = run({"hello": 1, "client": {"driver": {"name": "x"}}, "$db": "admin"}, client_metadata={"a": 1})
    assert (reply["code"], reply["codeName"]) == (186, "ClientMetadataCannotBeMutated")


def test_load_balanced_hello_is_refused():
    assert run({"hello": 1, "loadBalanced": True, "$db": "admin"})["code"] == 354


def test_advertised_limits_are_the_ones_the_wire_codec_and_write_commands_enforce():
    reply = run({"hello": 1, "$db": "admin"})
    assert reply["maxBsonObjectSize"] == limits.MAX_BSON_OBJECT_SIZE == wire.MAX_BSON_OBJECT_SIZE
    assert reply["maxMessageSizeBytes"] == limits.MAX_MESSAGE_SIZE == wire.MAX_MESSAGE_SIZE
    assert reply["maxWriteBatchSize"] == limits.MAX_WRITE_BATCH_SIZE == wire.MAX_WRITE_BATCH_SIZE
