"""replSetResizeOplog as mongod 7.0: the size in MB (990 MB to 1 PB, kept in the oplog's catalog
entry), minRetentionHours (entries younger than it outlive the size), IDL errors for bad input."""
from __future__ import annotations

import pytest
from bson.decimal128 import Decimal128
from support.engines import make_kv
from support.runner import Runner

from ginkgodb.engine import Engine

MB = 1024 * 1024


@pytest.fixture
def admin(engine):
    return Runner(engine, db="admin")


def max_size(engine) -> int:
    return Runner(engine, db="local")({"collStats": "oplog.rs"})["maxSize"]


def test_the_size_in_mb_becomes_the_oplogs_capped_size(engine, admin):
    assert admin({"replSetResizeOplog": 1, "size": 1000})["ok"] == 1.0
    assert max_size(engine) == 1000 * MB == engine.oplog.max_bytes
    admin({"replSetResizeOplog": 1, "size": Decimal128("2048.5")})
    assert max_size(engine) == int(2048.5 * MB)
    admin({"replSetResizeOplog": 1, "size": float(1024 ** 3)})            # the maximum: 1 PB
    assert max_size(engine) == 1024 ** 5
    admin({"replSetResizeOplog": 1, "minRetentionHours": 1})              # the size stays
    assert max_size(engine) == 1024 ** 5 and engine.oplog.min_retention_hours == 1.0


@pytest.mark.parametrize(("cmd", "code", "message"), [
    ({"size": 900}, 51024, "BSON field 'size' value must be >= 990, actual value '900'"),
    ({"size": -1024}, 51024, "BSON field 'size' value must be >= 990, actual value '-1024'"),
    ({"size": 8 * 1024 ** 4}, 51024, "BSON field 'size' value must be <= 1.07374e+09, actual value '8.79609e+12'"),
    ({"size": 990, "minRetentionHours": -1}, 51024,
     "BSON field 'minRetentionHours' value must be >= 0, actual value '-1'"),
    ({"size": "1000"}, 14, "BSON field 'replSetResizeOplog.size' is the wrong type 'string', expected types "
                           "'[long, int, decimal, double]'"),
    ({"minRetentionHours": True}, 14, "BSON field 'replSetResizeOplog.minRetentionHours' is the wrong type "
                                      "'bool', expected types '[long, int, decimal, double]'"),
    ({"sizeMB": 1000}, 40415, "BSON field 'replSetResizeOplog.sizeMB' is an unknown field."),
])
def test_bad_input_answers_mongods_error_and_changes_nothing(engine, admin, cmd, code, message):
    before = max_size(engine)
    reply = admin.error({"replSetResizeOplog": 1, **cmd})
    assert (reply["code"], reply["errmsg"]) == (code, message)
    assert max_size(engine) == before and engine.oplog.min_retention_hours == 0.0


def test_only_on_admin_and_only_with_an_oplog(engine, tmp_path):
    assert Runner(engine).error({"replSetResizeOplog": 1, "size": 1000})["codeName"] == "Unauthorized"
    without = Engine(make_kv("memory", tmp_path / "no-oplog"), oplog=False)
    try:
        reply = Runner(without, db="admin").error({"replSetResizeOplog": 1, "size": 1000})
        assert (reply["code"], reply["codeName"], reply["errmsg"]) == (26, "NamespaceNotFound", "oplog does not exist")
    finally:
        without.close()


def test_the_size_survives_a_restart(tmp_path):
    engine = Engine(make_kv("lmdb", tmp_path))
    try:
        Runner(engine, db="admin")({"replSetResizeOplog": 1, "size": 1500})
    finally:
        engine.close()
    engine = Engine(make_kv("lmdb", tmp_path))
    try:
        assert max_size(engine) == 1500 * MB == engine.oplog.max_bytes
    finally:
        engine.close()


def test_entries_younger_than_min_retention_hours_outlive_the_size(tmp_path):
    engine = Engine(make_kv("memory", tmp_path), oplog_bytes=4096)
    try:
        run = Runner(engine)
        run.insert("c", *({"_id": i, "pad": "x" * 200} for i in range(40)))
        for i in range(40, 80):
            run.insert("c", {"_id": i, "pad": "x" * 200})
        trimmed = engine.oplog.count
        assert engine.oplog.used_bytes <= 4096 + 400          # truncated to about its size
        Runner(engine, db="admin")({"replSetResizeOplog": 1, "minRetentionHours": 1})
        for i in range(80, 120):
            run.insert("c", {"_id": i, "pad": "x" * 200})
        assert engine.oplog.count == trimmed + 40              # every new entry kept: none is an hour old
        Runner(engine, db="admin")({"replSetResizeOplog": 1, "minRetentionHours": 0})
        run.insert("c", {"_id": 120})
        assert engine.oplog.used_bytes <= 4096 + 400          # 0: the size rules again
    finally:
        engine.close()
