"""The tools' worker processes (restore's BSON checks, export's JSON encoding, import's JSON
parsing): the same output, errors and counts as the inline path, on inputs big enough only
because the threshold is lowered here."""
from __future__ import annotations

import multiprocessing

import bson
import pytest

from ginkgodb import MongoClient
from ginkgodb.tools import parallel

from .conftest import raw_docs, seed

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="the tools' worker processes need the fork start method")


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    path = tmp_path_factory.mktemp("parallel") / "src"
    seed(str(path))
    client = MongoClient(str(path))
    client.plain.items.insert_many([{"_id": i, "s": f"item {i}", "n": i * 1.5} for i in range(4000)])
    client.plain.more.insert_many([{"x": i} for i in range(2500)])       # ObjectId _ids
    client.close()
    return path


@pytest.fixture(params=["inline", "workers"])
def mode(request, monkeypatch):
    """Each test runs twice: inline, and with worker processes for every input size."""
    used: list[int] = []
    if request.param == "workers":
        monkeypatch.setattr(parallel, "MIN_DOCUMENTS", 0)
        monkeypatch.setattr(parallel, "cores", lambda: 2)
    else:
        monkeypatch.setattr(parallel, "MIN_DOCUMENTS", 1 << 62)
    original = parallel.Workers.__init__

    def spy(self, n):
        used.append(n)
        original(self, n)

    monkeypatch.setattr(parallel.Workers, "__init__", spy)
    yield request.param, used
    if request.param == "workers":
        assert used and max(used) > 0, "no worker process was used"
    else:
        assert not any(used)


NAMESPACES = (("shop", "people"), ("shop", "log"), ("other", "things"), ("plain", "items"),
              ("plain", "more"))


def _same(a, b):
    ca, cb = MongoClient(str(a)), MongoClient(str(b))
    try:
        for db, coll in NAMESPACES:
            assert raw_docs(ca[db][coll]) == raw_docs(cb[db][coll]), f"{db}.{coll} differs"
    finally:
        ca.close()
        cb.close()


def test_restore_directory_and_archive(tool, src, tmp_path, mode):
    out, archive = tmp_path / "dump", tmp_path / "all.archive"
    tool("dump", "--dbpath", src, "--out", out)
    tool("dump", "--dbpath", src, f"--archive={archive}")
    for dst, source in ((tmp_path / "d1", [out, "--numParallelCollections", "3",
                                           "--numInsertionWorkersPerCollection", "2"]),
                        (tmp_path / "d2", [f"--archive={archive}", "-j", "1"])):
        _, err = tool("restore", "--dbpath", dst, *source, "--batchSize", "700")
        assert "finished restoring plain.items (4000 documents, 0 failures)" in err
        assert "9511 document(s) restored successfully. 0 document(s) failed to restore." in err
        _same(src, dst)
        # the oplog saw every restored insert, as it sees any other
        oplog = MongoClient(str(dst)).local["oplog.rs"]
        assert oplog.count_documents({"op": "i", "ns": "plain.items"}) == 4000


def test_restore_over_existing_documents_counts_duplicates(tool, src, tmp_path, mode):
    out, dst = tmp_path / "dump", tmp_path / "dst"
    tool("dump", "--dbpath", src, "--db", "plain", "--out", out)
    client = MongoClient(str(dst))
    client.plain.items.insert_many([{"_id": i, "mine": True} for i in range(0, 4000, 1000)])
    client.close()
    _, err = tool("restore", "--dbpath", dst, out, "--batchSize", "900")
    assert "continuing through error: E11000 duplicate key error" in err
    assert "6496 document(s) restored successfully. 4 document(s) failed to restore." in err
    kept = MongoClient(str(dst)).plain.items
    assert kept.count_documents({}) == 4000 and kept.count_documents({"mine": True}) == 4


def test_restore_refuses_a_bad_document_and_writes_none_of_its_batch(tool, src, tmp_path, mode):
    out, dst = tmp_path / "dump", tmp_path / "dst"
    tool("dump", "--dbpath", src, "--db", "plain", "--collection", "items", "--out", out)
    path = out / "plain" / "items.bson"
    data = bytearray(path.read_bytes())
    docs = bson.decode_all(bytes(data))
    offset = sum(len(bson.encode(d)) for d in docs[:1500])
    at = data.index(b"\x02s\x00", offset) + 3            # the length of document 1500's string
    data[at:at + 4] = (500).to_bytes(4, "little")        # framing intact, contents not
    path.write_bytes(bytes(data))
    _, err = tool("restore", "--dbpath", dst, out, "--batchSize", "1000", expect=1)
    assert "Failed: plain.items: invalid BSON" in err
    # the batches before it (documents 0-499 and 500-1499: the first batch of a file is
    # bsonfile.RAMP_FIRST documents, each next one twice the last) went in; nothing of the bad
    # one's batch (1500-2499) did
    assert MongoClient(str(dst)).plain.items.count_documents({}) == 1500


@pytest.mark.parametrize("flags", [[], ["--jsonFormat", "canonical"], ["--jsonArray"],
                                   ["--jsonArray", "--pretty"], ["--pretty"]])
def test_export_output_is_the_same(tool, src, tmp_path, mode, flags, monkeypatch):
    from ginkgodb.tools import export
    monkeypatch.setattr(export, "PARALLEL_BATCH", 333)
    for db, coll in (("plain", "items"), ("shop", "people")):
        out = tmp_path / f"{db}.{coll}.json"
        _, err = tool("export", "--dbpath", src, "-d", db, "-c", coll, "--out", out, *flags)
        text = out.read_bytes()
        expected = {"plain": 4000, "shop": 3000}[db]
        assert f"exported {expected} records" in err
        inline = tmp_path / "inline.json"
        with monkeypatch.context() as m:
            m.setattr(parallel, "MIN_DOCUMENTS", 1 << 62)
            tool("export", "--dbpath", src, "-d", db, "-c", coll, "--out", inline, *flags)
        assert text == inline.read_bytes()


def test_import_round_trip_and_bad_lines(tool, src, tmp_path, mode):
    out, dst = tmp_path / "items.json", tmp_path / "dst"
    tool("export", "--dbpath", src, "-d", "plain", "-c", "items", "--jsonFormat", "canonical",
         "--out", out)
    lines = out.read_bytes().splitlines(keepends=True)
    # a bad line, a document over three lines, and one with `_id` last, among the good ones
    spread = b'{"a": 1,\n "_id": {"$numberInt": "-1"},\n "b": [1, 2]}\n'
    edited = (lines[:10] + [b'{"_id": 5000, "bad": }\n'] + lines[10:2000] + [spread]
              + lines[2000:] + [b'{"x": "no _id", "_id": "last"}\n'])
    out.write_bytes(b"".join(edited))
    _, err = tool("import", "--dbpath", dst, "-d", "plain", "-c", "items", "--file", out,
                  "--batchSize", "600", expect=1)
    assert f"{out}:11: invalid JSON" in err
    assert "4002 document(s) imported successfully. 1 document(s) failed to import." in err
    got = MongoClient(str(dst)).plain.items
    assert got.count_documents({}) == 4002
    assert got.find_one({"_id": -1}) == {"_id": -1, "a": 1, "b": [1, 2]}
    assert list(got.find_one({"_id": "last"})) == ["_id", "x"]
    src_items = MongoClient(str(src)).plain.items
    mine = [d for d in raw_docs(got) if bson.decode(d)["_id"] not in (-1, "last")]
    assert mine == raw_docs(src_items)
    # the same file again: every document a duplicate, counted and continued through
    _, err = tool("import", "--dbpath", dst, "-d", "plain", "-c", "items", "--file", out,
                  expect=1)
    assert "0 document(s) imported successfully. 4003 document(s) failed to import." in err


def test_import_in_whole_chunks_is_the_same(tool, src, tmp_path, mode, monkeypatch):
    """Chunks of lines a worker parsed whole go to the batches as one piece (split where a
    batch ends); chunks with a bad line or a document spanning lines go line by line: the
    same documents, errors and counts either way."""
    from ginkgodb.tools import import_
    monkeypatch.setattr(import_, "PARSE_CHUNK", 450)
    out, dst = tmp_path / "items.json", tmp_path / "dst"
    tool("export", "--dbpath", src, "-d", "plain", "-c", "items", "--jsonFormat", "canonical",
         "--out", out)
    lines = out.read_bytes().splitlines(keepends=True)
    spread = b'{"a": 1,\n "_id": {"$numberInt": "-1"},\n "b": [1, 2]}\n'
    # the spread document opens at the end of a chunk and closes in the next one
    edited = lines[:1000] + [b'{"_id": 5000, "bad": }\n'] + lines[1000:1347] + [spread] + lines[1347:]
    out.write_bytes(b"".join(edited))
    _, err = tool("import", "--dbpath", dst, "-d", "plain", "-c", "items", "--file", out,
                  "--batchSize", "600", expect=1)
    assert f"{out}:1001: invalid JSON" in err
    assert "4001 document(s) imported successfully. 1 document(s) failed to import." in err
    got = MongoClient(str(dst)).plain.items
    assert got.find_one({"_id": -1}) == {"_id": -1, "a": 1, "b": [1, 2]}
    mine = [d for d in raw_docs(got) if bson.decode(d)["_id"] != -1]
    assert mine == raw_docs(MongoClient(str(src)).plain.items)


def test_import_batches_end_at_the_byte_limit_inside_a_chunk(monkeypatch):
    from ginkgodb.tools import bsonfile, import_
    from ginkgodb.tools.log import Log
    monkeypatch.setattr(bsonfile, "BATCH_BYTES", 1000)
    raws = [bson.encode({"_id": i, "s": "x" * 80}) for i in range(40)]       # 100 bytes each
    keys = [b"k"] * 40
    items = [(1, import_.Run(1, raws[:25], keys[:25]), None), (26, raws[25], None),
             (27, import_.Run(27, raws[26:], keys[26:]), None)]
    got = list(import_._batches(iter(items), 7, "f", import_.Counts(), Log(quiet=True), False))
    assert [b for b, _ in got] == [raws[i:i + 7] for i in range(0, 40, 7)]
    assert [k for _, k in got][:3] == [keys[:7], keys[7:14], keys[14:21]]
    assert got[3][1] == keys[21:25] + [None] + keys[26:28]
    monkeypatch.setattr(bsonfile, "BATCH_BYTES", 350)
    got = list(import_._batches(iter(items), 7, "f", import_.Counts(), Log(quiet=True), False))
    assert [len(b) for b, _ in got] == [4] * 10      # each ends with the 4th (408 bytes of 350)
    assert [r for b, _ in got for r in b] == raws
