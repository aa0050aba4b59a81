"""The catalog is published when its storage transaction commits, never before and never
half: readers planning during DDL see a catalog consistent with their snapshot."""
from __future__ import annotations

import threading

import pytest

from ginkgodb.engine import writes
from ginkgodb.engine.ddl import create_indexes, drop_indexes
from ginkgodb.engine.plan_builder import FindRequest
from ginkgodb.engine.reads import count, open_find


def test_queries_stay_exact_while_an_index_is_created_and_dropped(engine):
    writes.insert(engine, "db", "c", [{"_id": i, "a": i, "b": i % 7} for i in range(300)])
    stop = threading.Event()
    failures: list = []

    def ddl_loop() -> None:
        try:
            while not stop.is_set():
                with engine.write() as batch:
                    create_indexes(batch, batch.collection("db", "c"), [{"key": {"a": 1}, "name": "a_1"}])
                with engine.write() as batch:
                    drop_indexes(batch, batch.collection("db", "c"), "a_1")
        except BaseException as exc:  # reported below
            failures.append(exc)

    thread = threading.Thread(target=ddl_loop)
    thread.start()
    try:
        for i in range(400):
            lo = i % 250
            cursor = open_find(engine, "db", "c", FindRequest(filter={"a": {"$gte": lo}, "b": {"$ne": 99}}))
            try:
                got = [d["_id"] for d in cursor.next_batch(None)]
            finally:
                cursor.close()
            assert sorted(got) == list(range(lo, 300)), f"query {i} planned against a stale catalog"
            assert count(engine, "db", "c", {"a": lo}) == 1
    finally:
        stop.set()
        thread.join()
    assert not failures, failures


def test_an_aborted_batch_publishes_nothing(engine):
    writes.insert(engine, "db", "c", [{"_id": 1, "a": [1, 2]}])
    before = engine.catalog
    with pytest.raises(RuntimeError):
        with engine.write() as batch:
            create_indexes(batch, batch.collection("db", "c"), [{"key": {"a": 1}, "name": "a_1"}])
            assert batch.collection("db", "c").index("a_1") is not None  # the batch sees its own change
            assert engine.collection("db", "c").index("a_1") is None     # nobody else does
            raise RuntimeError("roll back")
    assert engine.catalog is before
    assert engine.collection("db", "c").index("a_1") is None
    with engine.read() as view:
        assert view.catalog.get("db", "c").index_named("a_1") is None


def test_multikey_flag_is_published_with_the_document_that_set_it(engine):
    writes.insert(engine, "db", "c", [{"_id": 1, "a": 1}])
    with engine.write() as batch:
        create_indexes(batch, batch.collection("db", "c"), [{"key": {"a": 1}, "name": "a_1"}])
    published = engine.collection("db", "c").index("a_1").meta
    assert not published.multikey_paths
    writes.insert(engine, "db", "c", [{"_id": 2, "a": [5, 6]}])
    assert not published.multikey_paths, "a published entry was changed in place"
    assert engine.collection("db", "c").index("a_1").meta.multikey_paths == {"a"}


def test_a_snapshot_gets_the_catalog_of_its_own_version(engine):
    """catalog_for remembers the generation of the last data version it read: a snapshot of
    another version still reads its own."""
    writes.insert(engine, "db", "c", [{"_id": 1}])
    old = engine.kv.snapshot()
    try:
        before = engine.catalog_for(old)
        with engine.write() as batch:
            create_indexes(batch, batch.collection("db", "c"), [{"key": {"a": 1}, "name": "a_1"}])
        new = engine.kv.snapshot()
        try:
            after = engine.catalog_for(new)
            assert after.gen > before.gen
            assert engine.catalog_for(old).gen == before.gen     # not the remembered version's
            assert engine.catalog_for(new) is after
            assert [ix.name for ix in after.collection("db", "c").meta.indexes] == ["_id_", "a_1"]
        finally:
            new.release()
    finally:
        old.release()


def test_a_find_commands_request_is_the_keyword_built_one():
    """FindRequest.of_find (the find command's) sets what the keyword constructor sets."""
    values = dict(filter={"a": 1}, sort={"b": -1}, projection={"a": 1}, skip=2, limit=3, hint="a_1",
                  collation={"locale": "fr"}, variables={"x": 1}, min_key={"a": 0}, max_key={"a": 9},
                  return_key=True, show_record_id=True, allow_disk_use=False)
    built = FindRequest.of_find(*values.values())
    assert built == FindRequest(**values)
    assert vars(built) == vars(FindRequest(**values))
    assert built.temp_dir is None and built.geo_near is None and built.compiled_projection is None
