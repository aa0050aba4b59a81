"""The tools against a server (--uri), the same round trips as through --dbpath."""
from __future__ import annotations

import json

import bson
import pymongo
import pytest
from bson.raw_bson import RawBSONDocument

from ginkgodb.cli import main
from ginkgodb.server.testing import running_server

RAW = bson.CodecOptions(document_class=RawBSONDocument)


@pytest.fixture
def server():
    with running_server() as (host, port):
        yield f"mongodb://{host}:{port}"


def _run(capsys, *argv, expect=0):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == expect, err
    return out, err


def _fill(uri):
    c = pymongo.MongoClient(uri)
    c.shop.create_collection("items", validator={"q": {"$gte": 0}})
    c.shop.items.insert_many([{"_id": i, "q": i, "s": str(i), "f": i / 3} for i in range(1500)])
    c.shop.items.create_index([("s", 1)], unique=True)
    c.shop.command("create", "cheap", viewOn="items", pipeline=[{"$match": {"q": {"$lt": 10}}}])
    return c


def _raw(coll):
    return [d.raw for d in coll.with_options(codec_options=RAW).find().sort("_id", 1)]


@pytest.mark.parametrize("how", ["directory", "archive"])
def test_dump_restore_over_the_wire(server, tmp_path, capsys, how):
    c = _fill(server)
    target = ["--out", tmp_path / "d"] if how == "directory" else [f"--archive={tmp_path / 'a'}", "--gzip"]
    _run(capsys, "dump", "--uri", server, *target)
    source = [tmp_path / "d"] if how == "directory" else [f"--archive={tmp_path / 'a'}", "--gzip"]
    _, err = _run(capsys, "restore", "--uri", server, *source, "--nsFrom", "shop.*", "--nsTo", "copy.*")
    assert "1500 document(s) restored successfully" in err
    assert _raw(c.shop.items) == _raw(c.copy.items)
    assert [i["name"] for i in c.copy.items.list_indexes()] == ["_id_", "s_1"]
    opts = {i["name"]: i for i in c.copy.list_collections()}
    assert opts["items"]["options"]["validator"] == {"q": {"$gte": 0}}
    assert c.copy.cheap.count_documents({}) == 10
    # restoring over the existing collection reports the duplicates and goes on
    _, err = _run(capsys, "restore", "--uri", server, *source, "--nsInclude", "shop.items")
    assert "0 document(s) restored successfully. 1500 document(s) failed to restore." in err
    c.close()


def test_export_import_over_the_wire(server, tmp_path, capsys):
    c = _fill(server)
    out = tmp_path / "items.json"
    _run(capsys, "export", "--uri", server, "-d", "shop", "-c", "items", "--jsonFormat",
         "canonical", "-o", out)
    _run(capsys, "import", "--uri", server, "-d", "back", "-c", "items", "--file", out)
    assert _raw(c.shop.items) == _raw(c.back.items)
    csv_out, _ = _run(capsys, "export", "--uri", server, "-d", "shop", "-c", "items", "--type",
                      "csv", "-f", "q,s", "--limit", "2", "--sort", '{"_id": 1}')
    assert csv_out.splitlines() == ["q,s", "0,0", "1,1"]
    c.close()


def test_stat_rows_as_json(server, capsys):
    out, _ = _run(capsys, "stat", "--uri", server, "--rowcount", "2", "--json", "0.2")
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 2
    (values,) = rows[0].values()
    assert set(values) >= {"insert", "query", "update", "delete", "getmore", "command", "conn",
                           "res", "time"}
    table, _ = _run(capsys, "stat", "--uri", server, "-n", "1", "0.1")
    assert table.splitlines()[0].split()[:6] == ["insert", "query", "update", "delete",
                                                 "getmore", "command"]


def test_unreachable_server_fails_clearly(capsys):
    _, err = _run(capsys, "dump", "--uri", "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300",
                  "--out", "x", expect=1)
    assert "Failed: error connecting to host" in err
