"""Catalog changes: collections and indexes created, dropped, renamed.

Each runs in one storage write transaction: an index build over existing data either completes with
every entry written or leaves nothing (a duplicate found halfway rolls the whole build back).
"""
from __future__ import annotations

from typing import Any, Optional

import bson

from ..errors import CommandError, ErrorCode
from ..storage.kv import prefix_end
from . import layout
from .catalog import CollectionMeta, IndexMeta
from .indexes import (IndexRuntime, comparable_options, find_index, normalize_spec)
from .names import check_collection_name, check_db_name
from .views import refuse_write

ID_INDEX_KEY = {"_id": 1}
MAX_INDEXES = 64


def create_collection(engine, txn, db: str, name: str, options: Optional[dict] = None,
                      *, implicit: bool = False) -> CollectionMeta:
    """REQUIRES: the engine write lock (callers hold `engine.write()`)."""
    check_db_name(db)
    check_collection_name(db, name, for_create=not implicit)
    if engine.catalog.get(db, name) is not None:
        raise CommandError(ErrorCode.NamespaceExists, f"Collection {db}.{name} already exists.")
    meta = CollectionMeta(engine.catalog.alloc_id(txn), db, name, dict(options or {}))
    if "viewOn" not in meta.options:  # a view has no data and no indexes
        meta.indexes.append(IndexMeta(engine.catalog.alloc_id(txn), "_id_", dict(ID_INDEX_KEY)))
    engine.catalog.save(txn, meta)
    return meta


def ensure_collection(engine, txn, db: str, name: str):
    """The collection's runtime state, creating it implicitly as a first insert does."""
    state = engine.collection(db, name)
    if state is None:
        create_collection(engine, txn, db, name, implicit=True)
        state = engine.collection(db, name)
    refuse_write(state)
    return state


def drop_collection(engine, txn, meta: CollectionMeta) -> int:
    """Remove a collection with its records and index entries; returns the index count it had."""
    _delete_prefix(txn, layout.record_prefix(meta.id))
    for ix in meta.indexes:
        _delete_prefix(txn, layout.index_prefix(ix.id))
    engine.catalog.remove(txn, meta)
    engine.forget(meta.db, meta.name)
    return len(meta.indexes)


def _delete_prefix(txn, prefix: bytes) -> int:
    keys = [k for k, _ in txn.scan(prefix, prefix_end(prefix))]
    for k in keys:
        txn.delete(k)
    return len(keys)


def rename_collection(engine, txn, meta: CollectionMeta, to_db: str, to_name: str, drop_target: bool) -> None:
    check_db_name(to_db)
    check_collection_name(to_db, to_name, for_create=True)
    target = engine.catalog.get(to_db, to_name)
    if target is not None:
        if not drop_target:
            raise CommandError(ErrorCode.NamespaceExists, "target namespace exists")
        drop_collection(engine, txn, target)
    engine.catalog.remove(txn, meta)
    engine.forget(meta.db, meta.name)
    meta.db, meta.name = to_db, to_name
    engine.catalog.save(txn, meta)


def create_indexes(engine, txn, state, specs: list) -> tuple[int, int, Optional[str]]:
    """(indexes before, after, note) — note is mongod's 'all indexes already exist' when nothing new."""
    meta = state.meta
    before = len(meta.indexes)
    new: list[IndexMeta] = []
    for spec in specs:
        name, key, options = normalize_spec(spec)
        existing = find_index(meta.indexes + new, name)
        same_key = [ix for ix in meta.indexes + new if list(ix.key.items()) == list(key.items())]
        if existing is not None:
            if list(existing.key.items()) != list(key.items()):
                raise CommandError(ErrorCode.IndexKeySpecsConflict,
                                   "An existing index has the same name as the requested index. When index "
                                   "names are not specified, they are auto generated and can cause conflicts. "
                                   "Please refer to our documentation. Requested index: "
                                   f"{_show(name, key, options)}, existing index: {_show_meta(existing)}")
            if comparable_options(existing.options) != comparable_options(options):
                raise CommandError(ErrorCode.IndexOptionsConflict,
                                   "An equivalent index already exists with the same name but different "
                                   f"options. Requested index: {_show(name, key, options)}, existing index: "
                                   f"{_show_meta(existing)}")
            continue
        for ix in same_key:
            if comparable_options(ix.options) == comparable_options(options):
                raise CommandError(ErrorCode.IndexOptionsConflict,
                                   f"Index already exists with a different name: {ix.name}")
        if list(key.items()) == [("_id", 1)] and name != "_id_":
            raise CommandError(ErrorCode.BadValue, "The _id index must be named _id_")
        if len(meta.indexes) + len(new) >= MAX_INDEXES:
            raise CommandError(ErrorCode.CannotCreateIndex,
                               f"add index fails, too many indexes for {meta.ns} key:{bson.SON(key)}")
        new.append(IndexMeta(engine.catalog.alloc_id(txn), name, key, options))
    for ix in new:
        _build(txn, state, ix)
        meta.indexes.append(ix)
    if new:
        engine.catalog.save(txn, meta)
        state.refresh()
    note = None if new else "all indexes already exist"
    return before, len(meta.indexes), note


def _build(txn, state, meta: IndexMeta) -> None:
    """Index every existing document, bulk: collect the entries, sort them, find duplicates
    between neighbours, then write them in key order. A duplicate aborts the build (and the
    transaction), leaving nothing behind."""
    runtime = IndexRuntime(meta, state.meta.ns)
    prefix = state.record_prefix
    entries: list[bytes] = []
    for key, raw in txn.scan(prefix, prefix_end(prefix)):
        rid_suffix = key[-layout.RID_WIDTH:]
        keys, multikey = runtime.keys(bson.decode(raw))
        entries.extend(k + rid_suffix for k in keys)
        if multikey:
            meta.multikey_paths |= multikey
    entries.sort()
    if meta.unique:
        _check_sorted_unique(txn, state, runtime, entries)
    runtime.add_entries(txn, entries)


def _check_sorted_unique(txn, state, runtime: IndexRuntime, entries: list[bytes]) -> None:
    width = layout.RID_WIDTH
    for before, after in zip(entries, entries[1:]):
        if before[:-width] == after[:-width]:
            rid = layout.rid_from_entry(after)
            doc = bson.decode(txn.get(state.record_key(rid)))
            raise runtime.duplicate_error(after[:-width], doc)


def drop_indexes(engine, txn, state, which: Any) -> int:
    """Drop by name, key pattern, list of names, or '*' (all but _id); returns the count before."""
    meta = state.meta
    before = len(meta.indexes)
    if which == "*":
        targets = [ix for ix in meta.indexes if not ix.is_id]
    else:
        names = which if isinstance(which, list) else [which]
        targets = []
        for spec in names:
            ix = find_index(meta.indexes, spec)
            if ix is None:
                if isinstance(spec, dict):
                    raise CommandError(ErrorCode.IndexNotFound,
                                       f"can't find index with key: {_show_key(spec)}")
                raise CommandError(ErrorCode.IndexNotFound, f"index not found with name [{spec}]")
            if ix.is_id:
                raise CommandError(ErrorCode.InvalidOptions, "cannot drop _id index")
            targets.append(ix)
    for ix in targets:
        _delete_prefix(txn, layout.index_prefix(ix.id))
        meta.indexes.remove(ix)
    engine.catalog.save(txn, meta)
    state.refresh()
    return before


def _show_key(key: dict) -> str:
    from ..bsonutil.shell_format import format_document
    return format_document(key)


def _show(name: str, key: dict, options: dict) -> str:
    from ..bsonutil.shell_format import format_document
    return format_document({"v": 2, "key": key, "name": name, **options})


def _show_meta(ix: IndexMeta) -> str:
    from ..bsonutil.shell_format import format_document
    return format_document(ix.spec())
