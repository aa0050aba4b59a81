"""A secondary's data path: pull the sync source's oplog, apply it, report the position.

pymongo is the client (it is already the project's BSON library; its connection pool, OP_MSG
and error handling are kept code): a `find` on `local.oplog.rs` after this member's last entry,
`tailable` and `awaitData`, then `getMore`s that wait for new entries on the source. Each batch
the source returns is applied in one storage transaction (engine.apply_oplog), in commit order,
then this member's position goes to the source with `replSetUpdatePosition`. Before tailing, the
source must hold this member's last entry with the same term: otherwise the histories diverged
(this member was a primary whose last writes never reached a majority) and it rolls back to the
common point; a member whose last entry is older than the source's first is too stale and stops
(RECOVERING, as mongod). A member with an empty oplog first clones the source (initial_sync.py).
"""
from __future__ import annotations

import datetime
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Optional

import bson
import pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from bson.timestamp import Timestamp

from ..engine import FindRequest, oplog_touched_documents
from .app_names import OPLOG_SYNC
from .initial_sync import (
    CloneProgress,
    InitialSyncError,
    clone,
    collection_entries,
    collection_infos,
    drop_database_entry,
    drop_entry,
)

LOG = logging.getLogger("ginkgodb.repl")
RAW = CodecOptions(document_class=RawBSONDocument)
ZERO = Timestamp(0, 0)
#: how long a getMore waits on the source for new entries (ms)
AWAIT_MS = 500
BATCH_SIZE = 1000
#: how far back a rollback looks for the common point (entries)
ROLLBACK_LIMIT = 100_000


class Diverged(Exception):
    """This member's last entry is not in the sync source's oplog."""


class TooStale(Exception):
    """The source's oplog starts after this member's last entry: it cannot catch up."""


class OplogSync:
    """The puller of one member: one thread, restarted towards each new sync source."""

    def __init__(self, engine: Any, member_id: Callable[[], int], config_version: Callable[[], int],
                 on_applied: Callable[[Timestamp], None], delay: Callable[[], float] = lambda: 0.0,
                 on_state: Callable[[str], None] = lambda state: None,
                 downstream: Callable[[], dict[int, Timestamp]] = dict) -> None:
        self.engine = engine
        #: the positions of members pulling from this one (chained replication), forwarded
        #: with this member's own in each replSetUpdatePosition, as mongod's reporter does
        self._downstream = downstream
        self._forwarded: dict[int, Timestamp] = {}
        self._client: Optional[Any] = None     # the puller's client to its source, while it runs
        #: told "STARTUP2" when an initial sync starts, "SECONDARY" when it is done, "RECOVERING"
        #: when this member is too stale for its source
        self._on_state = on_state
        #: the clone in progress (replSetGetStatus' initialSyncStatus), None otherwise
        self.initial_sync: Optional[CloneProgress] = None
        #: secondaryDelaySecs: an entry is applied once its `wall` is this many seconds old
        self._delay = delay
        self._member_id = member_id
        self._config_version = config_version
        self._on_applied = on_applied
        self._lock = threading.Lock()
        #: held while a batch is applied: stopping waits for the batch in progress, not for the
        #: thread (which may be waiting on a dead source)
        self._apply_lock = threading.Lock()
        self._source: Optional[str] = None
        self._thread: Optional[threading.Thread] = None
        self._stop = threading.Event()
        self.message = ""
        self.diverged = False
        self.last_applied_wall = 0.0
        #: the newest entry this member knows it shares with its source: the common point once
        #: checked, then each batch applied from it. The primary's majority point says nothing of
        #: this member's entries past it (a former primary's writes that never reached a majority)
        self.agreed = ZERO

    @property
    def source(self) -> str:
        return self._source or ""

    def follow(self, source: Optional[str]) -> None:
        """Pull from `source` (None: stop pulling)."""
        with self._lock:
            if source == self._source and (source is None or (self._thread and self._thread.is_alive())):
                return
            self._stop_thread()
            self._source = source
            if source is None or self.diverged:
                return
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._run, args=(source, self._stop), daemon=True,
                                            name="ginkgodb-oplog-sync")
            self._thread.start()

    def _stop_thread(self) -> None:
        """Stop pulling: once this returns, no batch is being applied and none will be."""
        self._stop.set()
        with self._apply_lock:
            self._thread = None

    def close(self) -> None:
        with self._lock:
            self._stop_thread()
            self._source = None

    # ------------------------------------------------------------------ the thread
    def _run(self, source: str, stop: threading.Event) -> None:
        while not stop.is_set():
            client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(
                source, directConnection=True, serverSelectionTimeoutMS=2000, connectTimeoutMS=1000,
                socketTimeoutMS=AWAIT_MS + 5000, appname=OPLOG_SYNC)
            self._client = client
            try:
                self._pull(client, stop)
            except Diverged as exc:
                self.diverged = True
                self.message = str(exc)
                LOG.error("replication stopped: %s", exc)
                return
            except InitialSyncError as exc:
                if stop.is_set():
                    return
                self.diverged = True     # something the clone cannot copy: say so, do not loop
                self.message = f"initial sync failed: {exc}"
                LOG.error("replication stopped: %s", self.message)
                return
            except TooStale as exc:
                self.diverged = True
                self.message = str(exc)
                LOG.error("replication stopped: %s", exc)
                self._on_state("RECOVERING")
                return
            except Exception as exc:   # the source went away or stepped down: try again
                self.message = f"sync source {source}: {exc}"[:300]
                stop.wait(0.2)
            finally:
                self._client = None
                client.close()

    def _pull(self, client: Any, stop: threading.Event) -> None:
        local = client.get_database("local", codec_options=RAW)
        self.agreed = ZERO       # until the common point with this source is checked
        last = self.engine.oplog.last_ts
        if last is None:
            last = self._initial_sync(client, stop)
            if last is None:
                return
        else:
            self._check_common_point(local, last)
            last = self.engine.oplog.last_ts     # after a rollback: the common point
        if last is not None:
            self.agreed = last
        filt = {"ts": {"$gt": last}} if last is not None else {}
        reply = local.command({"find": "oplog.rs", "filter": filt, "tailable": True, "awaitData": True,
                               "batchSize": BATCH_SIZE}, codec_options=RAW)
        cursor = reply["cursor"]
        batch = list(cursor["firstBatch"])
        cursor_id = cursor["id"]
        self._report(client)
        while not stop.is_set():
            while batch and not stop.is_set():
                ready, batch = self._ready(batch)
                if not ready:
                    stop.wait(0.1)     # a delayed member waits for its entries to be old enough
                    continue
                with self._apply_lock:
                    if stop.is_set():
                        return
                    applied = self.engine.apply_oplog([doc.raw for doc in ready])
                self.last_applied_wall = time.time()
                self.message = ""
                if applied is not None:
                    self.agreed = max(self.agreed, applied)
                    self._on_applied(applied)
                self._report(client)
            if not cursor_id:
                return     # the source closed the cursor: start again from the new last entry
            reply = local.command({"getMore": cursor_id, "collection": "oplog.rs", "batchSize": BATCH_SIZE,
                                   "maxTimeMS": AWAIT_MS}, codec_options=RAW)
            cursor = reply["cursor"]
            batch = list(cursor["nextBatch"])
            cursor_id = cursor["id"]
            if not batch and self._downstream() != self._forwarded:
                self._report(client)     # a member pulling from this one moved: tell the source

    def _initial_sync(self, client: Any, stop: threading.Event) -> Optional[Timestamp]:
        """Clone the source's databases, then append the entry the clone started at; returns its
        ts (None: stopped). An error leaves the oplog empty: the next attempt starts again."""
        progress = self.initial_sync = CloneProgress()
        self._on_state("STARTUP2")
        LOG.info("initial sync from %s", self.source)

        def apply(entries: list[bytes]) -> None:
            with self._apply_lock:
                if stop.is_set():
                    raise InitialSyncError("initial sync stopped")
                self.engine.apply_oplog(entries, logged=False)
        try:
            start = clone(self.engine, client, progress, stop.is_set, apply)
            if stop.is_set():
                return None
            with self._apply_lock:
                if stop.is_set():
                    return None
                last = self.engine.apply_oplog([start])
        finally:
            self.initial_sync = None
        LOG.info("initial sync done in %.2f s: %d databases, %d documents", time.time() - progress.started,
                 progress.databases_cloned, progress.documents_copied)
        self.message = ""
        self._on_state("SECONDARY")
        if last is not None:
            self._on_applied(last)
        return last

    def _ready(self, batch: list) -> tuple[list, list]:
        """(the entries old enough to apply, the rest): all of them unless the member is delayed."""
        delay = self._delay()
        if delay <= 0:
            return batch, []
        cutoff = time.time() - delay
        for i, doc in enumerate(batch):
            wall = doc.get("wall")
            if wall is not None and wall.replace(tzinfo=datetime.UTC).timestamp() > cutoff:
                return batch[:i], batch[i:]
        return batch, []

    def _check_common_point(self, local: Any, last: Timestamp) -> None:
        mine = oplog_entry(self.engine, last)
        if mine is None or _source_has(local, last, mine.get("t")):
            return
        first = list(local["oplog.rs"].find({}, {"ts": 1}, sort=[("$natural", 1)], limit=1))
        if first and first[0]["ts"] > last:
            # mongod's answer: the member cannot catch up and needs a resync (an empty dbpath)
            raise TooStale(f"We are too stale to use {self.source} as a sync source: our last fetched "
                           f"timestamp {last} is before their earliest timestamp {first[0]['ts']}; resync "
                           "this member (stop it, empty its dbpath, start it: it clones the set's data)")
        self._roll_back(local)

    def _roll_back(self, local: Any) -> None:
        """This member's newest entries are not the source's: undo them back to the common point
        (docs/design/replication.md, Rollback), keeping its versions in rollback files."""
        undone: list[dict] = []
        common: Optional[Timestamp] = None
        for entry in newest_entries(self.engine, ROLLBACK_LIMIT):
            if _source_has(local, entry["ts"], entry.get("t")):
                common = entry["ts"]
                break
            undone.append(entry)
        if common is None:
            raise Diverged(f"no common point with the sync source in this member's newest {ROLLBACK_LIMIT} oplog "
                           "entries: resync the member (stop it, empty its dbpath, start it)")
        touched: list[tuple[str, str, Any]] = []
        recloned: set[tuple[str, Optional[str]]] = set()     # (db, collection; None: the whole db)
        for entry in undone:
            docs = oplog_touched_documents(entry)
            if docs is None:
                recloned |= _catalog_namespaces(entry)
            else:
                touched += [d for d in docs if d not in touched]
        client = local.client
        restores, removed = [], []
        for db, coll, _id in touched:
            mine = _find_document(self.engine, db, coll, _id)
            if mine is not None:
                removed.append((db, coll, mine))
            if (db, coll) in recloned or (db, None) in recloned:
                continue      # the whole collection comes from the source
            theirs = client[db].get_collection(coll, codec_options=CodecOptions()).find_one({"_id": _id})
            restores.append((db, coll, _id, theirs))
        recreate = self._reclone_entries(client, recloned, removed)
        self._write_rollback_files(removed)
        count = self.engine.roll_back_oplog(common, restores, recreate)
        self.message = f"rolled back {count} oplog entries to the common point {common}"
        LOG.warning("rollback: %s (%d documents refetched, %d collections or databases copied again)",
                    self.message, len(restores), len(recloned))

    def _reclone_entries(self, client: Any, recloned: set, removed: list) -> list[bytes]:
        """An undone catalog change: drop the namespace here and copy the source's version of it
        (options, UUID, indexes, documents), as an initial sync would; this member's documents of
        a collection the source does not have go to the rollback files."""
        entries: list[bytes] = []
        for db, name in sorted(recloned, key=lambda n: (n[0], n[1] or "")):
            if name is None:
                entries.append(drop_database_entry(db))
                infos = collection_infos(client, db)
            else:
                entries.append(drop_entry(db, name))
                infos = collection_infos(client, db, name)
                if not infos:
                    removed += [(db, name, d) for d in _all_documents(self.engine, db, name)
                                if (db, name, d) not in removed]
            for info in infos:
                for chunk in collection_entries(client, db, info):
                    entries += chunk
        return entries

    def _write_rollback_files(self, removed: list[tuple[str, str, dict]]) -> None:
        """mongod's rollback files: this member's versions of the documents it rolled back."""
        root = self.engine.data_path()
        if root is None or not removed:
            return
        stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime())
        for db, coll, doc in removed:
            folder = os.path.join(root, "rollback", f"{db}.{coll}")
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"removed.{stamp}.0.bson"), "ab") as out:
                out.write(bson.encode(doc))

    def forward(self) -> None:
        """A member pulling from this one reported a newer position: pass it on to this
        member's source now (pymongo's pool gives the report its own connection while the
        puller waits in a getMore), so `w: N` does not wait for the next batch."""
        client = self._client
        if client is not None and self._downstream() != self._forwarded:
            self._report(client)

    def _report(self, client: Any) -> None:
        """replSetUpdatePosition with this member's applied (= durable) optime, and those of
        the members pulling from this one."""
        last = self.engine.oplog.last_ts
        if last is None:
            return
        version = self._config_version()
        downstream = self._downstream()
        optimes = []
        for member_id, ts in [(self._member_id(), last), *sorted(downstream.items())]:
            optime = {"ts": ts, "t": -1}
            optimes.append({"appliedOpTime": optime, "durableOpTime": optime, "memberId": member_id,
                            "cfgver": version})
        try:
            client.admin.command({"replSetUpdatePosition": 1, "optimes": optimes})
            self._forwarded = downstream
        except pymongo.errors.PyMongoError as exc:
            self.message = f"cannot report position: {exc}"[:300]


#: catalog changes a rollback undoes by copying the collection again (the command names' field)
_COLLECTION_COMMANDS = ("create", "drop", "createIndexes", "dropIndexes", "collMod")


def _catalog_namespaces(entry: dict) -> set[tuple[str, Optional[str]]]:
    """The namespaces an undone catalog change touched: (db, collection), or (db, None) for a
    whole database."""
    o = entry.get("o") or {}
    db = str(entry.get("ns", "")).partition(".")[0]
    name = next(iter(o), None)
    if name in _COLLECTION_COMMANDS and isinstance(o[name], str):
        return {(db, o[name])}
    if name == "renameCollection":
        return {tuple(str(o[k]).partition(".")[::2]) for k in ("renameCollection", "to")}  # type: ignore[misc]
    if name == "dropDatabase":
        return {(db, None)}
    if name == "applyOps" and isinstance(o.get("applyOps"), list):
        out: set[tuple[str, Optional[str]]] = set()
        for inner in o["applyOps"]:
            if oplog_touched_documents(inner) is None:
                out |= _catalog_namespaces(inner)
        return out
    raise Diverged(f"cannot roll back the catalog change at {entry.get('ts')} ({o}): resync the member "
                   "(stop it, empty its dbpath, start it)")


def _all_documents(engine: Any, db: str, coll: str) -> list[dict]:
    cursor = engine.find(db, coll, FindRequest(filter={}))
    try:
        out: list[dict] = []
        while True:
            docs = cursor.next_batch(1000)
            if not docs:
                return out
            out += [dict(bson.decode(d.raw)) if hasattr(d, "raw") else dict(d) for d in docs]
    finally:
        cursor.close()


def _source_has(local: Any, ts: Timestamp, term: Any) -> bool:
    found = local.command({"find": "oplog.rs", "filter": {"ts": ts}, "limit": 1, "singleBatch": True},
                          codec_options=CodecOptions())["cursor"]["firstBatch"]
    return bool(found) and found[0].get("t") == term


def newest_entries(engine: Any, limit: int) -> Iterator[dict]:
    """This member's newest oplog entries, newest first (decoded), read 100 at a time."""
    cursor = engine.find("local", "oplog.rs", FindRequest(filter={}, sort={"$natural": -1}, limit=limit))
    try:
        while True:
            docs = cursor.next_batch(100)
            if not docs:
                return
            for d in docs:
                yield bson.decode(d.raw) if hasattr(d, "raw") else dict(d)
    finally:
        cursor.close()


def _find_document(engine: Any, db: str, coll: str, _id: Any) -> Optional[dict]:
    cursor = engine.find(db, coll, FindRequest(filter={"_id": {"$eq": _id}}, limit=1))
    try:
        docs = cursor.next_batch(1)
    finally:
        cursor.close()
    return dict(bson.decode(docs[0].raw)) if docs and hasattr(docs[0], "raw") else (dict(docs[0]) if docs else None)


def oplog_entry(engine: Any, ts: Timestamp) -> Optional[dict]:
    """This member's oplog entry at `ts` (decoded), or None."""
    cursor = engine.find("local", "oplog.rs", FindRequest(filter={"ts": ts}, limit=1))
    try:
        docs = cursor.next_batch(1)
    finally:
        cursor.close()
    return dict(docs[0]) if docs else None
