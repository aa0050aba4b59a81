"""pymongo's own `gridfs` (GridFS, GridFSBucket, GridOutCursor) on the embedded client, in memory
and on a data directory; and that subclassing pymongo's Database/Collection lets none of
pymongo's methods run on ours."""
from __future__ import annotations

import gc
import io

import gridfs
import pymongo.collection
import pymongo.cursor
import pymongo.database
import pytest
from bson.int64 import Int64
from gridfs.errors import CorruptGridFile, FileExists, NoFile
from pymongo import DESCENDING
from pymongo.errors import ConfigurationError, CursorNotFound, InvalidOperation

from ginkgodb import MongoClient
from ginkgodb.client.collection import Collection
from ginkgodb.client.database import Database
from ginkgodb.client.pymongo_base import KEPT

CHUNK = 1024   # small chunks so that files span many of them


@pytest.fixture(params=["memory", "lmdb"])
def client(request, tmp_path):
    c = MongoClient() if request.param == "memory" else MongoClient(str(tmp_path / "data"))
    yield c
    c.close()


@pytest.fixture
def db(client):
    return client.files


def payload(size: int) -> bytes:
    return bytes(i % 251 for i in range(size))


# ---------------------------------------------------------------------------- the type checks
def test_database_and_collection_pass_pymongo_type_checks(db):
    assert isinstance(db, pymongo.database.Database)
    assert isinstance(db.fs, pymongo.collection.Collection)
    assert isinstance(db.with_options(), Database) and isinstance(db.fs.files, Collection)


@pytest.mark.parametrize("ours, theirs", [(Database, pymongo.database.Database),
                                          (Collection, pymongo.collection.Collection)])
def test_no_pymongo_method_is_reachable(client, ours, theirs):
    obj = client.db if ours is Database else client.db.coll
    for klass in theirs.__mro__:
        if not klass.__module__.startswith("pymongo"):
            continue
        for name in vars(klass):
            if name.startswith("__") or name in KEPT:
                continue
            owner = next(k for k in ours.__mro__ if name in vars(k))
            assert owner.__module__.startswith("ginkgodb"), (name, owner)
    # masked names behave as before the subclassing: private ones are missing, public ones
    # are sub-collections (pymongo's search-index helpers would otherwise reach its network)
    assert not hasattr(obj, "_retryable_read_command" if ours is Database else "_insert_one")
    assert isinstance(client.db.coll.create_search_index, Collection)


def test_client_options_timeout_is_none(client):
    assert client.options.timeout is None


# ---------------------------------------------------------------------------- GridFS
def test_gridfs_put_get_find_delete_across_chunks(db):
    fs = gridfs.GridFS(db)
    data = payload(10 * CHUNK + 17)
    file_id = fs.put(data, filename="a.bin", chunkSize=CHUNK, owner="ann")
    assert db.fs.chunks.count_documents({"files_id": file_id}) == 11
    out = fs.get(file_id)
    assert (out.read(), out.length, out.chunk_size, out.filename) == (data, len(data), CHUNK,
                                                                      "a.bin")
    assert out.owner == "ann" and out.upload_date is not None
    out.seek(3 * CHUNK - 2)
    assert out.read(4) == data[3 * CHUNK - 2:3 * CHUNK + 2]
    assert fs.exists(file_id) and fs.exists(filename="a.bin") and not fs.exists(filename="b")
    assert fs.list() == ["a.bin"]
    assert [f._id for f in fs.find({"owner": "ann"})] == [file_id]
    assert fs.find_one({"filename": "a.bin"}).read() == data
    assert fs.find_one(file_id)._id == file_id
    fs.delete(file_id)
    assert not fs.exists(file_id)
    assert db.fs.chunks.count_documents({}) == 0 and db.fs.files.count_documents({}) == 0


def test_gridfs_versions_and_cursor_options(db):
    fs = gridfs.GridFS(db)
    ids = [fs.put(f"v{i}".encode(), filename="doc") for i in range(4)]
    assert fs.get_last_version("doc")._id == ids[-1]
    assert fs.get_version("doc", 0).read() == b"v0"
    assert fs.get_version("doc", -2).read() == b"v2"
    cursor = fs.find({"filename": "doc"}).sort("uploadDate", DESCENDING).skip(1).limit(2)
    assert [g.read() for g in cursor] == [b"v2", b"v1"]
    assert [g.read() for g in fs.find(batch_size=1)] == [b"v0", b"v1", b"v2", b"v3"]
    assert len(fs.find({}, limit=3).to_list()) == 3
    with pytest.raises(NoFile):
        fs.get_version("doc", 4)
    with pytest.raises(NoFile):
        fs.get_last_version("nothing")


def test_gridfs_cursor_closed_early_kills_its_cursor(db):
    fs = gridfs.GridFS(db)
    for i in range(5):
        fs.put(b"x", filename=f"f{i}")
    cursor = fs.find(batch_size=2)
    assert next(cursor).filename == "f0"
    cursor_id = cursor.cursor_id
    assert cursor_id and cursor.alive
    assert db.command("getMore", Int64(cursor_id), collection="fs.files",
                      batchSize=1)["cursor"]["id"]
    cursor.close()   # pymongo's Cursor asks the client to kill it
    with pytest.raises(CursorNotFound):
        db.command("getMore", Int64(cursor_id), collection="fs.files")
    dropped = fs.find(batch_size=2)
    next(dropped)
    dropped_id = dropped.cursor_id
    del dropped       # its finaliser queues the kill, sent before the next command
    gc.collect()
    with pytest.raises(CursorNotFound):
        db.command("getMore", Int64(dropped_id), collection="fs.files")


def test_gridfs_errors_as_pymongo_raises_them(db):
    fs = gridfs.GridFS(db)
    with pytest.raises(NoFile):
        fs.get("missing")
    file_id = fs.put(payload(3 * CHUNK), _id="f", chunkSize=CHUNK)
    with pytest.raises(FileExists):
        fs.put(b"again", _id="f")
    db.fs.chunks.delete_one({"files_id": file_id, "n": 1})
    with pytest.raises(CorruptGridFile, match="Missing chunk"):
        fs.get(file_id).read()
    db.fs.chunks.update_one({"files_id": file_id, "n": 0}, {"$set": {"data": b"short"}})
    db.fs.chunks.insert_one({"files_id": file_id, "n": 1, "data": payload(CHUNK)})
    with pytest.raises(CorruptGridFile, match="truncated chunk"):
        fs.get(file_id).read()


def test_gridfs_with_an_explicit_session(client, db):
    fs = gridfs.GridFS(db)
    with client.start_session() as session:
        file_id = fs.put(b"in a session", filename="s", session=session)
        assert fs.get(file_id, session=session).read() == b"in a session"
        assert [g.filename for g in fs.find({}, session=session)] == ["s"]
        fs.delete(file_id, session=session)
        assert not fs.exists(file_id, session=session)


def test_gridfs_needs_an_acknowledged_write_concern(client):
    with pytest.raises(ConfigurationError):
        gridfs.GridFS(client.get_database("files", write_concern=pymongo.WriteConcern(w=0)))


# ---------------------------------------------------------------------------- GridFSBucket
def test_bucket_upload_download_by_id_and_name(db):
    bucket = gridfs.GridFSBucket(db, bucket_name="docs", chunk_size_bytes=CHUNK)
    data = payload(5 * CHUNK + 1)
    first = bucket.upload_from_stream("r.txt", io.BytesIO(data), metadata={"k": 1})
    with bucket.open_upload_stream("r.txt") as stream:
        stream.write(b"second")
    second = stream._id
    assert db.docs.files.count_documents({}) == 2
    assert db.docs.chunks.count_documents({"files_id": first}) == 6
    assert bucket.open_download_stream(first).read() == data
    assert bucket.open_download_stream(first).metadata == {"k": 1}
    assert bucket.open_download_stream_by_name("r.txt").read() == b"second"
    assert bucket.open_download_stream_by_name("r.txt", revision=0)._id == first
    assert bucket.open_download_stream_by_name("r.txt", revision=-2)._id == first
    assert bucket.open_download_stream_by_name("r.txt", revision=1)._id == second
    sink = io.BytesIO()
    bucket.download_to_stream_by_name("r.txt", sink, revision=0)
    assert sink.getvalue() == data
    with pytest.raises(NoFile):
        bucket.open_download_stream_by_name("r.txt", revision=2)
    with pytest.raises(NoFile):
        bucket.open_download_stream_by_name("nothing")
    assert [g.length for g in bucket.find({}, sort=[("length", DESCENDING)])] == [len(data), 6]


def test_bucket_rename_delete(db):
    bucket = gridfs.GridFSBucket(db)
    file_id = bucket.upload_from_stream("old", b"abc")
    bucket.rename(file_id, "new")
    assert bucket.open_download_stream_by_name("new")._id == file_id
    with pytest.raises(NoFile):
        bucket.rename("missing", "x")
    bucket.delete(file_id)
    with pytest.raises(NoFile):
        bucket.delete(file_id)
    with pytest.raises(NoFile):
        bucket.open_download_stream(file_id)


def test_bucket_with_session_and_custom_id(client, db):
    bucket = gridfs.GridFSBucket(db)
    with client.start_session() as session:
        bucket.upload_from_stream_with_id(7, "seven", b"7" * 3000, session=session)
        assert bucket.open_download_stream(7, session=session).read() == b"7" * 3000
        assert [g._id for g in bucket.find({"_id": 7}, session=session)] == [7]
    with pytest.raises(FileExists):
        bucket.upload_from_stream_with_id(7, "seven", b"")


def test_files_survive_reopening_the_data_directory(tmp_path):
    path = str(tmp_path / "data")
    with MongoClient(path) as c:
        file_id = gridfs.GridFSBucket(c.files).upload_from_stream("kept", payload(600_000))
    with MongoClient(path) as c:
        assert gridfs.GridFSBucket(c.files).open_download_stream(file_id).read() == \
            payload(600_000)


def test_mongoengine_file_field(tmp_path):
    mongoengine = pytest.importorskip("mongoengine", reason="mongoengine is not installed")
    mongoengine.connect("odm", alias="gridfs-test", mongo_client_class=MongoClient,
                        host=str(tmp_path / "data"), uuidRepresentation="standard")
    try:
        class Attachment(mongoengine.Document):
            name = mongoengine.StringField()
            blob = mongoengine.FileField(db_alias="gridfs-test")
            meta = {"db_alias": "gridfs-test"}

        doc = Attachment(name="report")
        doc.blob.put(payload(300_000), content_type="application/pdf", filename="r.pdf")
        doc.save()
        loaded = Attachment.objects.get(name="report")
        assert loaded.blob.read() == payload(300_000)
        assert (loaded.blob.content_type, loaded.blob.filename) == ("application/pdf", "r.pdf")
        loaded.blob.delete()
        loaded.save()
        assert not Attachment.objects.get(name="report").blob
    finally:
        mongoengine.disconnect(alias="gridfs-test")


def test_pymongos_own_cursor_runs_on_the_embedded_client(client):
    """The client protocol GridOutCursor relies on, through pymongo's plain Cursor."""
    coll = client.db.coll
    coll.insert_many([{"_id": i, "k": i % 3} for i in range(10)])
    cursor = pymongo.cursor.Cursor(coll, {"k": {"$ne": 1}}, sort=[("_id", DESCENDING)],
                                   skip=1, limit=5, batch_size=2, projection={"k": 0})
    assert list(cursor) == [{"_id": 8}, {"_id": 6}, {"_id": 5}, {"_id": 3}, {"_id": 2}]
    assert pymongo.cursor.Cursor(coll, {"_id": 3}).explain()["queryPlanner"]["namespace"] == \
        "db.coll"
    exhaust = pymongo.cursor.Cursor(coll, cursor_type=pymongo.CursorType.EXHAUST)
    with pytest.raises(InvalidOperation, match="exhaust cursors are not supported"):
        next(exhaust)
