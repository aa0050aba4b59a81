"""dump and restore through --dbpath: byte-exact round trips, options, indexes, archives, bad input."""
from __future__ import annotations

import json
import os

import bson
import pytest

from ginkgodb import MongoClient

from .conftest import FIXTURE, raw_docs, seed


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "src"
    seed(str(path))
    return path


def user_databases(client) -> list[str]:
    """The databases a restore may write (`admin` is always listed and `local`, which holds the
    oplog, always exists, as on mongod)."""
    return [name for name in client.list_database_names() if name not in ("admin", "local")]


def _same(a: str, b: str, namespaces=(("shop", "people"), ("shop", "log"), ("other", "things"))):
    ca, cb = MongoClient(a), MongoClient(b)
    try:
        for db, coll in namespaces:
            assert raw_docs(ca[db][coll]) == raw_docs(cb[db][coll]), f"{db}.{coll} differs"
            ia = [dict(i) for i in ca[db][coll].list_indexes()]
            ib = [dict(i) for i in cb[db][coll].list_indexes()]
            assert ia == ib
        for db in ("shop", "other"):
            la = {c["name"]: (c["type"], c["options"]) for c in ca[db].list_collections()}
            lb = {c["name"]: (c["type"], c["options"]) for c in cb[db].list_collections()}
            assert la == lb
    finally:
        ca.close()
        cb.close()


def test_dump_layout_is_mongodumps(tool, src, tmp_path):
    out = tmp_path / "dump"
    _, err = tool("dump", "--dbpath", src, "--out", out)
    assert "done dumping shop.people (3000 documents)" in err
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == ["other/things.bson", "other/things.metadata.json", "prelude.json",
                     "shop/adults.metadata.json", "shop/log.bson", "shop/log.metadata.json",
                     "shop/people.bson", "shop/people.metadata.json"]
    meta = json.loads((out / "shop" / "people.metadata.json").read_text())
    assert list(meta) == ["options", "indexes", "uuid", "collectionName", "type"]
    assert meta["options"]["collation"] == {"locale": "fr", "strength": {"$numberInt": "2"}}
    assert meta["indexes"][1] == {"v": {"$numberInt": "2"}, "key": {"name": {"$numberInt": "1"},
                                  "age": {"$numberInt": "-1"}}, "name": "name_age", "unique": True}
    assert len(meta["uuid"]) == 32 and meta["type"] == "collection"
    view = json.loads((out / "shop" / "adults.metadata.json").read_text())
    assert view == {"options": {"viewOn": "people", "pipeline": [{"$match": {"age": {"$gte": {
        "$numberInt": "18"}}}}]}, "indexes": [], "collectionName": "adults", "type": "view"}
    docs = bson.decode_all((out / "shop" / "people.bson").read_bytes())
    assert len(docs) == 3000 and docs[0]["name"] == "p0"


@pytest.mark.parametrize("gz", [False, True])
def test_directory_round_trip_is_byte_exact(tool, src, tmp_path, gz):
    out, dst = tmp_path / "dump", tmp_path / "dst"
    tool("dump", "--dbpath", src, "--out", out, *(["--gzip"] if gz else []))
    if gz:
        assert (out / "shop" / "people.bson.gz").exists()
    _, err = tool("restore", "--dbpath", dst, out, *(["--gzip"] if gz else []))
    assert "3011 document(s) restored successfully. 0 document(s) failed to restore." in err
    _same(str(src), str(dst))
    view = MongoClient(str(dst)).shop.adults
    assert view.count_documents({}) == sum(1 for i in range(3000) if i % 90 >= 18)


@pytest.mark.parametrize("gz", [False, True])
def test_archive_round_trip_is_byte_exact(tool, src, tmp_path, gz):
    archive, dst = tmp_path / "all.archive", tmp_path / "dst"
    flags = ["--gzip"] if gz else []
    tool("dump", "--dbpath", src, f"--archive={archive}", *flags)
    head = archive.read_bytes()[:4]
    assert head == (b"\x1f\x8b\x08\x00" if gz else bytes.fromhex("6de29981"))
    tool("restore", "--dbpath", dst, f"--archive={archive}", *flags)
    _same(str(src), str(dst))


def test_archive_through_stdout_and_stdin(src, tmp_path, capsysbinary, monkeypatch):
    from ginkgodb.cli import main
    assert main(["dump", "--dbpath", str(src), "--archive", "--db", "other"]) == 0
    data = capsysbinary.readouterr().out
    assert data[:4] == bytes.fromhex("6de29981")

    class Stdin:
        buffer = __import__("io").BytesIO(data)
    monkeypatch.setattr("sys.stdin", Stdin)
    dst = tmp_path / "dst"
    assert main(["restore", "--dbpath", str(dst), "--archive"]) == 0
    assert MongoClient(str(dst)).other.things.find_one() == {"_id": "x", "v": 1}


def test_query_and_namespace_selection(tool, src, tmp_path):
    out = tmp_path / "q"
    tool("dump", "--dbpath", src, "--db", "shop", "--collection", "people", "--query",
         '{"age": {"$lt": 2}}', "--out", out)
    assert len(bson.decode_all((out / "shop" / "people.bson").read_bytes())) == 2 * 34
    out2 = tmp_path / "ns"
    tool("dump", "--dbpath", src, "--nsInclude", "shop.*", "--nsExclude", "shop.log", "--out", out2)
    assert sorted(os.listdir(out2 / "shop")) == ["adults.metadata.json", "people.bson",
                                                  "people.metadata.json"]
    assert not (out2 / "other").exists()


def test_restore_renames_and_filters(tool, src, tmp_path):
    out, dst = tmp_path / "dump", tmp_path / "dst"
    tool("dump", "--dbpath", src, "--out", out)
    tool("restore", "--dbpath", dst, out, "--nsInclude", "shop.people", "--nsInclude", "other.*",
         "--nsFrom", "shop.*", "--nsTo", "copy.*", "--nsFrom", "other.$c$", "--nsTo", "o2.$c$_v")
    c = MongoClient(str(dst))
    assert sorted(user_databases(c)) == ["copy", "o2"]
    assert c.copy.people.count_documents({}) == 3000
    assert c.o2.things_v.find_one() == {"_id": "x", "v": 1}
    assert [i["name"] for i in c.copy.people.list_indexes()] == ["_id_", "name_age", "score_1"]


def test_existing_collection_duplicates_are_counted(tool, src, tmp_path):
    out, dst = tmp_path / "dump", tmp_path / "dst"
    tool("dump", "--dbpath", src, "--db", "other", "--out", out)
    tool("restore", "--dbpath", dst, out)
    _, err = tool("restore", "--dbpath", dst, out)
    assert "restoring to existing collection other.things without dropping" in err
    assert "continuing through error: E11000 duplicate key error" in err
    assert "0 document(s) restored successfully. 1 document(s) failed to restore." in err
    _, err = tool("restore", "--dbpath", dst, out, "--stopOnError", expect=1)
    assert "Failed: other.things: E11000 duplicate key error" in err
    _, err = tool("restore", "--dbpath", dst, out, "--drop")
    assert "dropping collection other.things before restoring" in err
    assert "1 document(s) restored successfully. 0 document(s) failed" in err


def test_no_index_restore_and_maintain_order(tool, src, tmp_path):
    out, dst = tmp_path / "dump", tmp_path / "dst"
    tool("dump", "--dbpath", src, "--out", out)
    tool("restore", "--dbpath", dst, out, "--noIndexRestore", "--maintainInsertionOrder",
         "--numParallelCollections", "1", "--numInsertionWorkersPerCollection", "3")
    c = MongoClient(str(dst))
    assert [i["name"] for i in c.shop.people.list_indexes()] == ["_id_"]
    assert [d["_id"] for d in c.shop.people.find({}, {"_id": 1}).limit(5)] == [0, 1, 2, 3, 4]


def test_mongodump_fixture_restores(tool, tmp_path):
    for source in (["dump"], ["--archive=" + os.path.join(FIXTURE, "dump.archive")]):
        dst = tmp_path / ("d" + str(len(source[0])))
        args = [os.path.join(FIXTURE, "dump")] if source == ["dump"] else source
        _, err = tool("restore", "--dbpath", dst, *args)
        assert "5 document(s) restored successfully. 0 document(s) failed to restore." in err
        c = MongoClient(str(dst))
        assert user_databases(c) == ["shop"]          # admin.system.* is not restored
        fixture_docs = bson.decode_all(open(os.path.join(FIXTURE, "dump", "shop", "products.bson"), "rb").read())
        got = c.shop.products.with_options(codec_options=bson.CodecOptions()).find()
        assert sorted(map(bson.encode, got), key=len) == sorted(map(bson.encode, fixture_docs), key=len)
        infos = {i["name"]: i for i in c.shop.list_collections()}
        assert infos["customers"]["options"]["collation"]["version"] == "57.1"
        assert infos["customers"]["options"]["validationLevel"] == "strict"
        assert infos["expensive"]["type"] == "view"
        assert sorted(d["name"] for d in c.shop.expensive.find()) == ["lamp", "rug"]
        idx = {i["name"]: dict(i) for i in c.shop.products.list_indexes()}
        assert idx["sku_1"]["unique"] is True
        assert idx["price_-1_tags_1"]["partialFilterExpression"] == {"price": {"$gt": 0}}
        assert idx["added_1"]["expireAfterSeconds"] == 2000000000 and idx["added_1"]["sparse"]
        email = {i["name"]: dict(i) for i in c.shop.customers.list_indexes()}["email_1"]
        assert email["collation"]["locale"] == "fr"
        # the validator came along: a document without an email is refused
        from pymongo.errors import WriteError
        with pytest.raises(WriteError):
            c.shop.customers.insert_one({"name": "x"})
        # and the collation: strength 2 makes the emails case-insensitive
        assert c.shop.customers.count_documents({"email": "bob@EXAMPLE.com"}) == 1


@pytest.mark.parametrize("damage, message", [
    (lambda p: p.write_bytes(p.read_bytes()[:-10]), r"people\.bson: offset \d+: unexpected end of file"),
    (lambda p: p.write_bytes(b"\x03\x00\x00\x00" + p.read_bytes()), r"people\.bson: offset 0: invalid BSON document length 3"),
    (lambda p: (p.parent / "people.metadata.json").write_text('{"indexes": [1]}'), r"people\.metadata\.json: index #0"),
    (lambda p: (p.parent / "people.metadata.json").write_text('{"indexes": '), r"error parsing metadata in .*people\.metadata\.json"),
])
def test_malformed_dump_stops_before_writing(tool, src, tmp_path, damage, message):
    out, dst = tmp_path / "dump", tmp_path / "dst"
    tool("dump", "--dbpath", src, "--out", out)
    damage(out / "shop" / "people.bson")
    _, err = tool("restore", "--dbpath", dst, out, expect=1)
    assert pytest.importorskip("re").search(message, err), err
    assert user_databases(MongoClient(str(dst))) == []     # nothing was written


def test_malformed_archive_stops_before_writing(tool, src, tmp_path):
    archive, dst = tmp_path / "a.archive", tmp_path / "dst"
    tool("dump", "--dbpath", src, f"--archive={archive}")
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    _, err = tool("restore", "--dbpath", dst, f"--archive={archive}", expect=1)
    assert "a.archive: offset" in err and "corruption found in archive" in err
    assert user_databases(MongoClient(str(dst))) == []


def test_argument_rules(tool, src, tmp_path):
    _, err = tool("dump", "--dbpath", src, "--collection", "x", expect=1)
    assert "Failed: cannot dump a collection without a specified database" in err
    # ginkgodb keeps an oplog everywhere, so --oplog works on a standalone data directory too
    _, err = tool("dump", "--dbpath", src, "--oplog", "--out", tmp_path / "with-oplog")
    assert "writing captured oplog" in err and (tmp_path / "with-oplog" / "oplog.bson").exists()
    _, err = tool("dump", "--dbpath", src, "--archive=x", "--out", "y", expect=1)
    assert "--out not allowed when --archive is specified" in err
    _, err = tool("restore", "--dbpath", tmp_path / "d", tmp_path / "missing", expect=1)
    assert "no such file or directory" in err
    _, err = tool("dump", "--dbpath", src, "--uri", "mongodb://x", expect=1)
    assert "--dbpath cannot be used with --uri" in err


def test_dry_run_writes_nothing(tool, src, tmp_path):
    out, dst = tmp_path / "dump", tmp_path / "dst"
    tool("dump", "--dbpath", src, "--out", out)
    _, err = tool("restore", "--dbpath", dst, out, "--dryRun")
    assert "would restore shop.people to shop.people (3000 documents)" in err
    assert not dst.exists()


def test_help_for_every_tool(tool):
    for name in ("dump", "restore", "export", "import", "stat"):
        with pytest.raises(SystemExit) as exc:
            tool(name, "--help")
        assert exc.value.code == 0
        assert "usage: ginkgodb " + name in tool.capsys.readouterr().out
