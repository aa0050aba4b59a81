"""Initial sync: a member with an empty oplog copies the sync source's data, then tails from there.

As mongod's: note the source's newest oplog entry (the clone's start), drop every database but
`local`, clone every database of the source (collections with their options and UUIDs, then
their indexes, then their documents, then views; and the sessions' retry records, from the
source's oplog), append the start entry to this member's oplog, and tail the oplog after it:
the entries written during the clone are applied again, which is harmless since entries are
idempotent. A time-series collection is its buckets collection (copied as any collection) and
the view on it that the primary logs. The clone is written as made-up oplog entries (create,
createIndexes, `i`) applied without being logged (`engine.apply_oplog(..., logged=False)`), so
it goes through the applier's one path to the catalog and the records. A member killed during
the clone has an empty oplog still, and starts again from the drop.

The same entries re-create a collection in a rollback of a catalog change (sync.py)."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Optional

import bson
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

from ..engine import timeseries_buckets_name, timeseries_view_pipeline

RAW = CodecOptions(document_class=RawBSONDocument)
PLAIN: CodecOptions = CodecOptions()
#: documents per write batch of the clone
CLONE_BATCH = 1000
SKIPPED_DATABASES = frozenset({"local"})


class InitialSyncError(Exception):
    """Something the clone cannot copy: the sync stops with the message (never a partial copy)."""


@dataclass
class CloneProgress:
    """What replSetGetStatus' `initialSyncStatus` reports of the clone in progress."""

    started: float = field(default_factory=time.time)
    databases_to_clone: int = 0
    databases_cloned: int = 0
    documents_copied: int = 0
    start_ts: Any = None

    def document(self) -> dict:
        import datetime
        return {"failedInitialSyncAttempts": 0, "maxFailedInitialSyncAttempts": 10,
                "initialSyncStart": datetime.datetime.fromtimestamp(self.started, datetime.UTC),
                "totalInitialSyncElapsedMillis": int((time.time() - self.started) * 1000),
                "initialSyncOplogStart": self.start_ts,
                "approxTotalDocumentsCopied": self.documents_copied,
                "databases": {"databasesToClone": self.databases_to_clone,
                              "databasesCloned": self.databases_cloned}}


def _entry(op: str, ns: str, o: Any, ui: Any = None) -> bytes:
    doc: dict = {"op": op, "ns": ns}
    if ui is not None:
        doc["ui"] = ui
    doc["o"] = o
    return bson.encode(doc)


def drop_entry(db: str, name: str) -> bytes:
    return _entry("c", f"{db}.$cmd", {"drop": name})


def drop_database_entry(db: str) -> bytes:
    return _entry("c", f"{db}.$cmd", {"dropDatabase": 1})


def collection_infos(client: Any, db: str, name: Optional[str] = None) -> list[dict]:
    """The source's listCollections documents of `db` (one collection when `name`), views last."""
    filt = {"name": name} if name is not None else {}
    infos = list(client[db].list_collections(filter=filt))
    order = {"timeseries": 1, "view": 2}   # a time-series namespace after its buckets, views last
    return sorted(infos, key=lambda i: order.get(i.get("type", ""), 0))


def collection_entries(client: Any, db: str, info: dict, progress: Optional[CloneProgress] = None,
                       stop: Callable[[], bool] = lambda: False) -> Iterator[list[bytes]]:
    """The made-up entries that re-create one of the source's collections here, in batches:
    its create (options, UUID), its indexes, then its documents."""
    name = info["name"]
    options = dict(info.get("options") or {})
    if info.get("type") == "view":
        yield [_entry("c", f"{db}.$cmd", {"create": name, **options})]
        return
    if info.get("type") == "timeseries":
        # its buckets collection (`system.buckets.<name>`, listed as a collection) is copied as
        # any other, documents and indexes included; the namespace itself is the view on it
        # that the primary's create logs (mongod's initial sync copies it from system.views)
        ts = options.get("timeseries")
        if not isinstance(ts, dict):
            raise InitialSyncError(f"the time-series collection {db}.{name} has no timeseries options")
        view = {"create": name, "viewOn": timeseries_buckets_name(name), "pipeline": timeseries_view_pipeline(ts),
                **options}
        yield [_entry("c", f"{db}.$cmd", view)]
        return
    uuid = (info.get("info") or {}).get("uuid")
    first = [_entry("c", f"{db}.$cmd", {"create": name, **options}, uuid)]
    for spec in client[db][name].list_indexes():
        spec = dict(spec)
        if spec.get("name") == "_id_" or spec.get("clustered"):
            continue
        first.append(_entry("c", f"{db}.$cmd", {"createIndexes": name, **spec}, uuid))
    yield first
    coll = client[db].get_collection(name, codec_options=RAW)
    chunk: list[bytes] = []
    for doc in coll.find({}, batch_size=CLONE_BATCH, sort=[("$natural", 1)]):
        chunk.append(_entry("i", f"{db}.{name}", doc, uuid))
        if len(chunk) >= CLONE_BATCH:
            if stop():
                raise InitialSyncError("initial sync stopped")
            if progress is not None:
                progress.documents_copied += len(chunk)
            yield chunk
            chunk = []
    if chunk:
        if progress is not None:
            progress.documents_copied += len(chunk)
        yield chunk


def retry_record_entries(local: Any, start: Any) -> list[bytes]:
    """The sessions' records up to the clone's start, from the source's oplog (the entries that
    carry `retryResult`, and a committed transaction's `applyOps` entry: {txnNumber,
    committedTransaction}), newest per session, as made-up no-op entries: the applier stores the
    record of each. mongod copies `config.transactions`; the oplog holds the same records for
    every write or commit a retry can still name."""
    newest: dict[bytes, bytes] = {}
    cursor = local["oplog.rs"].find(
        {"$or": [{"retryResult": {"$exists": True}}, {"o.applyOps": {"$exists": True}, "lsid": {"$exists": True}}],
         "ts": {"$lte": start}},
        {"lsid": 1, "retryResult": 1, "txnNumber": 1}, sort=[("$natural", 1)])
    for entry in cursor:
        lsid = entry.get("lsid")
        if lsid is None:
            continue
        record = entry.get("retryResult")
        if record is None:
            if "txnNumber" not in entry:
                continue
            record = {"txnNumber": entry["txnNumber"], "committedTransaction": True}
        key = bson.encode(lsid)
        newest.pop(key, None)       # keep the order of the newest record per session
        newest[key] = _entry_with_session("n", "", {"msg": "retry record"}, lsid, record)
    return list(newest.values())


def _entry_with_session(op: str, ns: str, o: Any, lsid: Any, record: Any) -> bytes:
    return bson.encode({"lsid": lsid, "op": op, "ns": ns, "o": o, "retryResult": record})


def clone(engine: Any, client: Any, progress: CloneProgress, stop: Callable[[], bool],
          apply: Optional[Callable[[list[bytes]], None]] = None) -> bytes:
    """Copy every database of the source at `client` into `engine` (its own databases dropped
    first); returns the source's oplog entry the clone started at (raw), to append and tail from.
    `apply` writes one batch of made-up entries (default: unlogged apply_oplog); the puller's
    checks that it was not stopped meanwhile, so a clone it gave up writes nothing more."""
    if apply is None:
        def apply(entries: list[bytes]) -> None:
            engine.apply_oplog(entries, logged=False)
    local = client.get_database("local", codec_options=RAW)
    newest = list(local["oplog.rs"].find({}, sort=[("$natural", -1)], limit=1))
    if not newest:
        raise InitialSyncError("the sync source has no oplog entry to start from")
    start = newest[0].raw
    progress.start_ts = bson.decode(start)["ts"]
    mine = [db for db in engine.database_names() if db not in SKIPPED_DATABASES]
    if mine:
        apply([drop_database_entry(db) for db in mine])
    records = retry_record_entries(local, progress.start_ts)
    for i in range(0, len(records), CLONE_BATCH):
        apply(records[i:i + CLONE_BATCH])
    databases = [d for d in client.list_database_names() if d not in SKIPPED_DATABASES]
    progress.databases_to_clone = len(databases)
    for db in databases:
        for info in collection_infos(client, db):
            for entries in collection_entries(client, db, info, progress, stop):
                apply(entries)
        progress.databases_cloned += 1
    return start
