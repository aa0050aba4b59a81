"""Catalog changes: collections and indexes created, dropped, renamed.

Each runs in a write batch (one storage transaction; the new catalog entry is published when it
commits): an index build over existing data either completes with
every entry written or leaves nothing (a duplicate found halfway rolls the whole build back).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Optional

import bson

from ..errors import CommandError, ErrorCode
from ..query.operation import checked
from ..storage.kv import prefix_end
from . import layout, record_format, text_build, text_synonyms
from .access import access_method, kind_of
from .access.entries import IndexEntries
from .batch import WriteBatch
from .catalog import CollectionMeta, IndexMeta
from .clustered import clustered_index_meta
from .collection import Collection
from .index_sorter import EntrySorter
from .index_specs import comparable_options, find_index, normalize_spec
from .names import check_collection_name, check_db_name
from .storage_options import requested_codec
from .views import check_view_graph, refuse_write

ID_INDEX_KEY = {"_id": 1}
MAX_INDEXES = 64


def create_collection(batch: WriteBatch, db: str, name: str, options: Optional[dict] = None,
                      *, implicit: bool = False, uuid: Any = None) -> CollectionMeta:
    """`uuid`: the collection's UUID when it is given (a secondary applying the primary's create)."""
    check_db_name(db)
    check_collection_name(db, name, for_create=not implicit)
    if batch.catalog.get(db, name) is not None:
        raise CommandError(ErrorCode.NamespaceExists, f"Collection {db}.{name} already exists.")
    options = dict(options or {})
    codec = requested_codec(options) or batch.default_compression
    if "viewOn" in options:
        check_view_graph(batch.catalog, db, name, options)
    indexes: tuple = ()
    coll_id = batch.alloc_id()
    if "clusteredIndex" in options:  # records keyed by _id: the records are the _id index
        indexes = (clustered_index_meta(batch.alloc_id(), options),)
    elif "viewOn" not in options:  # a view has no data and no indexes
        indexes = (IndexMeta(batch.alloc_id(), "_id_", dict(ID_INDEX_KEY)),)
    else:
        codec = "none"
    if not batch.compresses:   # the in-memory engine keeps documents plain (docs/design/storage-layout.md)
        codec = "none"
    meta = CollectionMeta(coll_id, db, name, options, indexes=indexes, compression=codec)
    if uuid is not None:
        meta = meta.evolve(uuid=uuid)
    batch.save_meta(meta, "create", options=options)
    return meta


def ensure_collection(batch: WriteBatch, db: str, name: str) -> Collection:
    """The collection's handle, creating the collection implicitly as a first insert does."""
    coll = batch.collection(db, name)
    if coll is None:
        create_collection(batch, db, name, implicit=True)
        coll = batch.collection(db, name)
        assert coll is not None
    refuse_write(coll)
    return coll


def drop_collection(batch: WriteBatch, meta: CollectionMeta, **info: Any) -> int:
    """Remove a collection with its records and index entries; returns the index count it had.
    The change records how many documents it held (the oplog's `numRecords`)."""
    txn = batch.txn
    records = 0 if meta.is_view else batch.numbers(meta.id).count
    _delete_prefix(txn, layout.record_prefix(meta.id))
    for ix in meta.indexes:
        _delete_prefix(txn, layout.index_prefix(ix.id))
    batch.forget_numbers(meta.id)
    if meta.is_view:
        info["viewOn"] = meta.options["viewOn"]
    batch.remove_meta(meta, "drop", numRecords=records, **info)
    return len(meta.indexes)


def _delete_prefix(txn, prefix: bytes) -> int:
    keys = [k for k, _ in txn.scan(prefix, prefix_end(prefix))]
    for k in keys:
        txn.delete(k)
    return len(keys)


def rename_collection(batch: WriteBatch, meta: CollectionMeta, to_db: str, to_name: str,
                      drop_target: bool) -> None:
    check_db_name(to_db)
    check_collection_name(to_db, to_name, for_create=True)
    target = batch.catalog.get(to_db, to_name)
    dropped: dict = {}
    if target is not None:
        if not drop_target:
            raise CommandError(ErrorCode.NamespaceExists, "target namespace exists")
        drop_collection(batch, target, forRename=True)  # part of the rename's one oplog entry
        dropped["dropTarget"] = target.uuid
    batch.remove_meta(meta, "rename", to=f"{to_db}.{to_name}", **dropped)
    batch.save_meta(meta.evolve(db=to_db, name=to_name), "rename", **{"from": meta.ns})


def modify_collection(batch: WriteBatch, meta: CollectionMeta, options: dict,
                      indexes: Optional[list] = None, index_change: Optional[tuple] = None) -> CollectionMeta:
    """collMod: new options merged in, index entries replaced (a new catalog entry); a view's
    new definition must not close a cycle. The change records the options before it and the
    index change ({name, <option>: new}, {<option>: old})."""
    if "viewOn" in meta.options and ("viewOn" in options or "pipeline" in options):
        check_view_graph(batch.catalog, meta.db, meta.name, {**meta.options, **options})
    changed = meta.evolve(options={**meta.options, **options},
                          indexes=indexes if indexes is not None else meta.indexes)
    info: dict = {"options": options, "old": dict(meta.options)}
    if index_change is not None:
        info["index"], info["index_old"] = index_change
    batch.save_meta(changed, "collMod", **info)
    return changed


def modify_index(meta: CollectionMeta, target: Any, options: dict) -> tuple[list, dict, tuple]:
    """collMod of one index's `hidden`/`expireAfterSeconds`: (the new index list, the reply's
    `<option>_old`/`<option>_new` fields, the change as the oplog records it)."""
    ix = find_index(list(meta.indexes), target)
    if ix is None:
        raise CommandError(ErrorCode.IndexNotFound, f"cannot find index {target} for ns {meta.ns}")
    if options.get("hidden") and ix.is_id:
        raise CommandError(ErrorCode.BadValue, "can't hide _id index")
    reply = {}
    changed = dict(ix.options)
    for option in ("hidden", "expireAfterSeconds"):
        if option in options:
            reply[f"{option}_old"] = ix.options.get(option, False if option == "hidden" else None)
            changed[option] = options[option]
            reply[f"{option}_new"] = options[option]
    new = ix.evolve(options=changed)
    logged = ({"name": ix.name, **{k: v for k, v in options.items() if k in ("hidden", "expireAfterSeconds")}},
              {k[:-4]: v for k, v in reply.items() if k.endswith("_old")})
    return [new if i is ix else i for i in meta.indexes], reply, logged


def create_indexes(batch: WriteBatch, coll: Collection, specs: list) -> tuple[int, int, Optional[str]]:
    """(indexes before, after, note) — note is mongod's 'all indexes already exist' when nothing new."""
    meta = coll.meta
    before = len(meta.indexes)
    new: list[IndexMeta] = []
    for spec in specs:
        name, key, options = normalize_spec(spec)
        if text_synonyms.SYNONYMS_OPTION in options:   # a named, valid synonym source
            source = text_synonyms.check_option(meta.db, options[text_synonyms.SYNONYMS_OPTION])
            text_synonyms.load(batch.txn, batch.catalog, meta.db, source)
        if "clusteredIndex" in meta.options and list(key.items()) == [("_id", 1)]:
            continue   # the clustered index is the collection's _id index (clustered.py)
        existing = find_index(list(meta.indexes) + new, name)
        same_key = [ix for ix in list(meta.indexes) + new if list(ix.key.items()) == list(key.items())]
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
        _check_one_text_index(list(meta.indexes) + new, name, key, options)
        if len(meta.indexes) + len(new) >= MAX_INDEXES:
            raise CommandError(ErrorCode.CannotCreateIndex,
                               f"add index fails, too many indexes for {meta.ns} key:{bson.SON(key)}")
        if text_build.check_option(key, options):   # built later, by the engine's builder
            if coll.clustered:
                raise CommandError(ErrorCode.NotImplemented, "a background text index build on a "
                                   "clustered collection is not supported by ginkgodb")
            options = {**options, text_build.STATE_OPTION: text_build.initial_state(batch.numbers(meta.id))}
        new.append(IndexMeta(batch.alloc_id(), name, key, options))
    if not new:
        return before, before, "all indexes already exist"
    built = [ix if text_build.STATE_OPTION in ix.options else _build(batch.txn, coll, ix) for ix in new]
    batch.save_meta(meta.evolve(indexes=list(meta.indexes) + built), "createIndexes",
                    indexes=[ix.spec() for ix in built])
    return before, before + len(built), None


def _check_one_text_index(indexes: list[IndexMeta], name: str, key: dict, options: dict) -> None:
    """A collection has at most one text index (mongod: every text index has the key
    `{_fts: "text", _ftsx: 1}` when not compound, so a second one is an equivalent index)."""
    if kind_of(key) != "text":
        return
    for ix in indexes:
        if kind_of(ix.key) != "text" or ix.name == name:
            continue
        if list(ix.key.items()) == list(key.items()):
            raise CommandError(ErrorCode.IndexOptionsConflict,
                               "An equivalent index already exists with a different name and options. "
                               f"Requested index: {_show(name, key, _shown_options(options))}, existing index: "
                               f"{_show_meta(ix)}")
        raise CommandError(ErrorCode.CannotCreateIndex,
                           f'only one text index per collection allowed, found existing text index "{ix.name}"')


def _shown_options(options: dict) -> dict:
    from .catalog_entries import INTERNAL_OPTIONS
    return {k: v for k, v in options.items() if k not in INTERNAL_OPTIONS}


def _build(txn, coll: Collection, meta: IndexMeta) -> IndexMeta:
    """Index every existing document, bulk: collect the entries, sort them (in bounded runs,
    index_sorter.py), find duplicates between neighbours, then write them in key order. A
    duplicate aborts the build (and the batch), leaving nothing behind. Returns the entry with
    the multikey paths found."""
    runtime = access_method(meta, coll.meta.ns)
    prefix = coll.record_prefix
    multikey_paths: set = set()
    runtime.rids = coll.rids
    with EntrySorter() as sorter:
        for key, raw in checked(txn.scan(prefix, prefix_end(prefix))):
            rid_suffix = coll.rids.suffix(coll.rid_of_record_key(key))
            keys, multikey = runtime.keys(bson.decode(record_format.document(raw)))
            sorter.extend([k + rid_suffix for k in keys])
            if multikey:
                multikey_paths |= multikey
        entries = sorter.sorted_entries()
        if meta.unique:
            entries = _checked_unique(txn, coll, runtime, entries)
        runtime.add_entries(txn, entries)
    return meta.evolve(multikey_paths=frozenset(multikey_paths)) if multikey_paths else meta


def _checked_unique(txn, coll: Collection, runtime: IndexEntries, entries: Iterator[bytes]) -> Iterator[bytes]:
    """`entries` (sorted) passed through, raising the duplicate-key error at the first entry
    whose key equals its predecessor's."""
    key_of, rid_of = coll.rids.key_of_entry, coll.rids.of_entry
    before_key = None
    for entry in entries:
        key = key_of(entry, 0)
        if key == before_key:
            doc = bson.decode(record_format.document(txn.get(coll.record_key(rid_of(entry)))))
            raise runtime.duplicate_error(key, doc)
        before_key = key
        yield entry


def drop_indexes(batch: WriteBatch, coll: Collection, which: Any) -> int:
    """Drop by name, key pattern, list of names, or '*' (all but _id); returns the count before."""
    meta = coll.meta
    before = len(meta.indexes)
    if which == "*":
        targets = [ix for ix in meta.indexes if not ix.is_id]
    else:
        names = which if isinstance(which, list) else [which]
        targets = []
        for spec in names:
            ix = find_index(list(meta.indexes), spec)
            if ix is None:
                if isinstance(spec, dict):
                    raise CommandError(ErrorCode.IndexNotFound,
                                       f"can't find index with key: {_show_key(spec)}")
                raise CommandError(ErrorCode.IndexNotFound, f"index not found with name [{spec}]")
            if ix.is_id:
                raise CommandError(ErrorCode.InvalidOptions, "cannot drop _id index")
            targets.append(ix)
    for ix in targets:
        _delete_prefix(batch.txn, layout.index_prefix(ix.id))
    batch.save_meta(meta.evolve(indexes=[ix for ix in meta.indexes if ix not in targets]), "dropIndexes",
                    indexes=[ix.spec() for ix in targets])
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
