"""The oplog: `local.oplog.rs`, written in each write batch's own storage transaction.

The `Oplog` is the engine's first batch observer (engine.py): `before_commit` turns the batch's
logical operations into entries (oplog_entries.py), appends them in commit order (record id order
is `ts` order), records pre-images for the collections that keep them (preimages.py) and
truncates the oldest entries beyond the capped size, all inside the batch's transaction. Design,
format and sizes: docs/design/oplog.md.
"""
from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from operator import itemgetter
from typing import Any, Optional

import bson
from bson.timestamp import Timestamp

from ..bsonutil.delta import elements
from ..storage.kv import prefix_end
from . import layout
from . import oplog_entries as E
from .batch import CatalogChange, Delete, Insert, Update, WriteBatch, read_numbers
from .catalog import CollectionMeta
from .collection import Collection
from .preimages import expire_before
from .preimages import record as record_preimage
from .record_format import document
from .records import append_raws, remove_raw

_INSERTS_ONLY = {Insert}
_DELETES_ONLY = {Delete}
_NS, _UUID = itemgetter(0), itemgetter(1)     # Insert.ns, Insert.uuid (Delete's too)


def _one_collection(ops: list) -> bool:
    """Do all of `ops` name one collection? Compared by the UUID objects' identity (a batch's
    operations on one collection share its handle's; equal UUIDs in distinct objects just take
    the general path): hashing a UUID's Binary runs Python code, once per operation."""
    return len(set(map(id, map(_UUID, ops)))) == 1 and len(set(map(_NS, ops))) == 1

DB, COLL = "local", "oplog.rs"
NS = f"{DB}.{COLL}"
MB = 1024 * 1024
GB = 1024 * MB
#: mongod's bounds: WiredTiger 5% of free disk within [990 MB, 50 GB]; in-memory 5% of RAM
#: within [50 MB, 50 GB]; ginkgodb's embedded default within [64 MB, 1 GB]
SERVER_BOUNDS = (990 * MB, 50 * GB)
MEMORY_BOUNDS = (50 * MB, 50 * GB)
EMBEDDED_BOUNDS = (64 * MB, 1 * GB)
#: the environment switch that turns the oplog off (for measuring what it costs)
DISABLE_ENV = "GINKGODB_OPLOG"


def default_size(path: Optional[str], *, server: bool) -> int:
    """The capped size of a new oplog, in bytes (docs/design/oplog.md)."""
    if path is None:
        try:
            physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            physical = 8 * GB
        low, high = MEMORY_BOUNDS
        return int(min(max(physical * 0.05, low), high))
    probe = path
    while probe and not os.path.exists(probe):
        probe = os.path.dirname(probe)
    free = shutil.disk_usage(probe or ".").free
    low, high = SERVER_BOUNDS if server else EMBEDDED_BOUNDS
    return int(min(max(free * 0.05, low), high))


def enabled_by_default() -> bool:
    return os.environ.get(DISABLE_ENV, "on").lower() not in ("off", "0", "false", "no")


def entry_ts(raw: bytes) -> Timestamp:
    """The `ts` of an entry's bytes, without decoding the rest."""
    for name, _, _, value, _ in elements(raw):
        if name == b"ts":
            inc, secs = E._TS.unpack_from(raw, value)
            return Timestamp(secs, inc)
    raise ValueError("oplog entry without ts")


class Oplog:
    """The oplog of one engine (`engine.oplog`): writer (a batch observer) and reading helpers."""

    def __init__(self, engine: Any, max_bytes: int, *, enabled: bool = True) -> None:
        self._engine = engine
        self.enabled = enabled
        self.max_bytes = max_bytes
        #: the replication term written as `t` (-1 until a replica set sets one)
        self.term = -1
        #: mongod's oplogMinRetentionHours (replSetResizeOplog): entries younger than this are
        #: kept even when the oplog is over its size; 0 keeps none past the size (this process only)
        self.min_retention_hours = 0.0
        #: the majority commit point of a replica set of several members (set by the member):
        #: change streams return entries up to it only, as mongod's read majority-committed data;
        #: None (a standalone, a set of one) returns every entry
        self.majority_committed: Optional[Callable[[], Timestamp]] = None
        self._builder = E.EntryBuilder()
        self._logged: dict[str, bool] = {}
        self._next_rid: Optional[int] = None     # the record id this process expects next
        self._images_gen = -1                    # the catalog generation _images_ns is of
        self._images_ns: frozenset = frozenset()  # namespaces that keep pre-images
        self._tail_key: tuple[int, int] = (-1, -1)  # (wall ms, term) that _tail encodes
        self._tail = b""
        #: the oplog's handle in the last published catalog a batch wrote with (every write
        #: looks it up), and the entry whose capped size max_bytes holds
        self._handle_of: tuple[Any, Optional[Collection]] = (None, None)
        self._sized: Any = None

    # ------------------------------------------------------------------ opening
    def open(self) -> None:
        """Create the oplog if the data directory has none; seed the clock from its last entry."""
        if not self.enabled:
            return
        engine = self._engine
        meta = engine.catalog.get(DB, COLL)
        if meta is None:
            with engine.write() as batch:
                meta = batch.catalog.get(DB, COLL)   # another process sharing the directory made it?
                if meta is None:
                    options = {"capped": True, "size": self.max_bytes, "autoIndexId": False}
                    codec = batch.default_compression if batch.compresses else "none"
                    meta = CollectionMeta(batch.alloc_id(), DB, COLL, options, indexes=(), compression=codec)
                    batch.save_meta(meta, "create", options=options)
        if meta is not None:
            self.max_bytes = int(meta.options.get("size") or self.max_bytes)
        last = self.last_ts
        if last is not None:
            engine.clock.seed(last)

    def majority_moved(self) -> None:
        """The majority commit point moved: change streams waiting at it look again."""
        self._engine.commit_signal.notify()

    def set_term(self, term: int) -> None:
        self.term = int(term)

    def resize(self, max_bytes: int) -> None:
        """A new capped size (replSetResizeOplog); takes effect at the next write."""
        with self._engine.write() as batch:
            meta = batch.catalog.get(DB, COLL)
            if meta is not None:
                batch.save_meta(meta.evolve(options={**meta.options, "size": int(max_bytes)}), "collMod",
                                options={"size": int(max_bytes)})
        self.max_bytes = int(max_bytes)

    # ------------------------------------------------------------------ writing (observer)
    def before_commit(self, batch: WriteBatch) -> None:
        ops = batch.ops
        if batch.replicated is not None:
            self._append_replicated(batch)
            return
        if not ops or not self.enabled:
            return
        catalog = batch.catalog
        seen, coll = self._handle_of
        if catalog is not seen:
            coll = catalog.collection(DB, COLL)
            if not batch.catalog_changed:   # a batch's own copy may still abort: not kept
                self._handle_of = (catalog, coll)
        if coll is None:
            return
        if len(ops) == 1:
            op = ops[0]
            if type(op) is Insert:   # an insert_one: no loop, no image
                if self._is_logged(op.ns):
                    if batch.txn_info is None:
                        self._append_one(batch, coll, self._builder.insert(op))
                    else:
                        self._append(batch, coll, [self._builder.insert(op)], [op])
                return
            if ((type(op) is Update or type(op) is Delete) and batch.txn_info is None and self._is_logged(op.ns)
                    and not self._keeping_images(batch)):   # one update or delete, no pre-image to keep
                body = self._builder.update(op) if isinstance(op, Update) else self._builder.delete(op)
                self._append_one(batch, coll, body)
                return
        bodies, images = self._bodies(batch, ops)
        if bodies:
            self._append(batch, coll, bodies, images)

    def after_commit(self, batch: WriteBatch) -> None:
        pass

    def _is_logged(self, ns: str) -> bool:
        known = self._logged.get(ns)
        if known is None:
            known = self._logged[ns] = E.logged(ns)
        return known

    def _bodies(self, batch: WriteBatch, ops: list) -> tuple[list, list]:
        """(entry bodies, and for each its CRUD operation, or None for a catalog change)."""
        builder, is_logged = self._builder, self._is_logged
        kinds = set(map(type, ops))
        if ((kinds == _INSERTS_ONLY or kinds == _DELETES_ONLY) and _one_collection(ops)
                and is_logged(ops[0].ns)):
            if kinds == _INSERTS_ONLY:           # a batch of inserts into one collection
                return builder.inserts(ops), list(ops)
            if kinds == _DELETES_ONLY:           # a delete_many's, from one collection
                return builder.deletes(ops), list(ops)
        bodies: list[bytes] = []
        images: list[Any] = []
        for op in ops[:len(ops)]:
            t = type(op)
            if t is Insert:
                if is_logged(op.ns):
                    bodies.append(builder.insert(op))
                    images.append(op)
            elif t is Update:
                if is_logged(op.ns):
                    bodies.append(builder.update(op))
                    images.append(op)
            elif t is Delete:
                if is_logged(op.ns):
                    bodies.append(builder.delete(op))
                    images.append(op)
            elif t is CatalogChange and is_logged(op.ns):
                for body in builder.command(op):
                    bodies.append(body)
                    images.append(None)
        return bodies, images

    def _continue_clock(self, batch: WriteBatch, coll: Collection) -> bool:
        """Seed the clock after the newest entry when another process appended since this one
        last wrote (or this is its first write); True when it did."""
        numbers = batch.numbers(coll.meta.id)
        if self._next_rid is not None and numbers.next_rid == self._next_rid:
            return False
        last = _last_entry(batch.txn, coll)
        if last is not None:
            self._engine.clock.seed(entry_ts(last[1]))
        return True

    def _timestamps(self, batch: WriteBatch, coll: Collection, n: int) -> list[Timestamp]:
        reseeded = self._continue_clock(batch, coll)
        if n == 1 and not reseeded and batch.commit_ts is not None:
            return [batch.commit_ts]
        secs, first = self._engine.clock.reserve(n)
        return [Timestamp(secs, first + i) for i in range(n)]

    def _append(self, batch: WriteBatch, coll: Collection, bodies: list, images: Optional[list]) -> None:
        """Stamp and store the entries (`images`: each body's CRUD operation, or None for a
        catalog change; None: inserts only, no pre-image to keep)."""
        txn_info = batch.txn_info
        wall_ms = int(time.time() * 1000)
        if wall_ms != self._tail_key[0] or self.term != self._tail_key[1]:   # t, v, wall: per ms
            self._tail_key, self._tail = (wall_ms, self.term), E.tail(self.term, wall_ms)
        tail = self._tail
        if txn_info is None:
            n = len(bodies)
            if n == 1 and not self._continue_clock(batch, coll) and batch.commit_ts is not None:
                ts = batch.commit_ts
                secs, first = ts.time, ts.inc
                entries = [E.finish_one(bodies[0], secs, first, tail)]
            else:
                secs, first = self._engine.clock.reserve(n)
                batch.commit_ts = Timestamp(secs, first + n - 1)
                entries = E.finish_all(bodies, secs, first, tail)
            next_rid = append_raws(batch, coll, entries)
            if images is not None and self._keeping_images(batch):
                image_at = [(Timestamp(secs, first + i), 0) for i in range(n)]
                self._keep_preimages(batch, images, image_at, wall_ms)
        else:
            assert images is not None   # a session's batch always names its operations
            transaction = txn_info.get("autocommit") is False
            stamps = self._timestamps(batch, coll, 1 if transaction else len(bodies))
            if transaction:
                entries = [E.finish(E.session_prefix(txn_info), E.apply_ops_body(bodies), stamps[0], tail,
                                    E.prev_optime(None, self.term))]
                image_at = [(stamps[0], i) for i in range(len(bodies))]
            else:
                entries = self._retryable(txn_info, bodies, images, stamps, tail)
                image_at = [(ts, 0) for ts in stamps]
            next_rid = append_raws(batch, coll, entries)
            batch.commit_ts = stamps[-1]
            if self._keeping_images(batch):
                self._keep_preimages(batch, images, image_at, wall_ms)
        numbers = batch.numbers(coll.meta.id)
        meta = coll.meta
        if meta is not self._sized:   # resized elsewhere (another process, a replicated collMod)?
            self.max_bytes = int(meta.options.get("size") or self.max_bytes)
            self._sized = meta
        if numbers.size > self.max_bytes and numbers.count > 1:
            self._truncate(batch, coll)
        self._next_rid = next_rid

    def _append_one(self, batch: WriteBatch, coll: Collection, body: bytes) -> None:
        """`_append` of an ordinary batch's one entry with no pre-image (an insert_one's, or one
        update's or delete's while no collection keeps pre-images), when this process wrote the
        oplog's last entry: stamped with the batch's commit_ts, stored and counted in place.
        Anything else takes `_append`."""
        numbers = batch.numbers(coll.meta.id)
        ts = batch.commit_ts
        rid = numbers.next_rid
        if ts is None or rid != self._next_rid or coll.meta is not self._sized:
            self._append(batch, coll, [body], None)
            return
        wall_ms = int(time.time() * 1000)
        if wall_ms != self._tail_key[0] or self.term != self._tail_key[1]:
            self._tail_key, self._tail = (wall_ms, self.term), E.tail(self.term, wall_ms)
        entry = E.finish_one(body, ts.time, ts.inc, self._tail)
        batch.txn.put(coll.record_prefix + layout.rid_bytes(rid), coll.stored(entry))
        numbers.count += 1
        numbers.size += len(entry)
        numbers.next_rid = rid + 1
        numbers.dirty = True
        if numbers.size > self.max_bytes and numbers.count > 1:
            self._truncate(batch, coll)
        self._next_rid = rid + 1

    def _append_replicated(self, batch: WriteBatch) -> None:
        """A secondary's batch: the primary's entries as they are (same ts, t, wall), so every
        member's oplog is the same history and a position means the same on each."""
        coll = batch.catalog.collection(DB, COLL)
        raws = batch.replicated or []
        if coll is None or not raws or not self.enabled:
            return
        self._next_rid = append_raws(batch, coll, raws)
        last = entry_ts(raws[-1])
        self._engine.clock.seed(last)
        batch.commit_ts = last
        numbers = batch.numbers(coll.meta.id)
        if numbers.size > self.max_bytes and numbers.count > 1:
            self._truncate(batch, coll)

    def _keeping_images(self, batch: WriteBatch) -> frozenset:
        """The namespaces whose collections keep pre-images (recomputed per catalog generation)."""
        catalog = batch.catalog
        if catalog.gen != self._images_gen or batch.catalog_changed:
            keep = frozenset(meta.ns for meta in catalog.all()
                             if isinstance(meta.options.get("changeStreamPreAndPostImages"), dict)
                             and meta.options["changeStreamPreAndPostImages"].get("enabled"))
            if batch.catalog_changed:
                return keep   # not cached: the batch may still abort
            self._images_gen, self._images_ns = catalog.gen, keep
        return self._images_ns

    def _retryable(self, txn_info: dict, bodies: list, images: list, stamps: list, tail: bytes) -> list:
        """A retryable write's entries: session fields, the k-th CRUD entry the k-th statement id,
        chained by prevOpTime."""
        prefix = E.session_prefix(txn_info)
        stmt_ids = list(txn_info.get("stmtIds") or ())
        record = txn_info.get("record")
        last_crud = max((i for i, op in enumerate(images) if op is not None), default=-1)
        entries = []
        prev: Optional[Timestamp] = None
        k = 0
        for i, (body, op, ts) in enumerate(zip(bodies, images, stamps)):
            if op is None:   # a catalog change (an implicit create): no session fields
                entries.append(E.finish(b"", body, ts, tail))
                continue
            if k < len(stmt_ids):
                body += E.stmt_id(int(stmt_ids[k]))
            k += 1
            if i == last_crud and record is not None:   # the retry record, for the secondaries
                body += E.e_doc(b"retryResult", bson.encode(record))
            entries.append(E.finish(prefix, body, ts, tail, E.prev_optime(prev, self.term)))
            prev = ts
        return entries

    def _keep_preimages(self, batch: WriteBatch, images: list, image_at: list, wall_ms: int) -> None:
        enabled: dict[str, bool] = {}
        for op, (ts, index) in zip(images, image_at):
            if type(op) is not Update and type(op) is not Delete:
                continue
            keeps = enabled.get(op.ns)
            if keeps is None:
                keeps = enabled[op.ns] = _keeps_preimages(batch, op.ns, op.uuid)
            if keeps:
                record_preimage(batch, op.uuid, ts, index, wall_ms, op.before)

    def _truncate(self, batch: WriteBatch, coll: Collection) -> None:
        """Remove the oldest entries while the oplog is over its size (one always stays), and the
        pre-images older than the new first entry."""
        numbers = batch.numbers(coll.meta.id)
        excess = numbers.size - self.max_bytes
        if excess <= 0 or numbers.count <= 1:
            return
        doomed: list[tuple[int, bytes]] = []
        freed = 0
        first_kept: Optional[bytes] = None
        retained_after = time.time() - self.min_retention_hours * 3600 if self.min_retention_hours > 0 else None
        for key, value in batch.txn.scan(coll.record_prefix, prefix_end(coll.record_prefix)):
            raw = document(value)
            if (freed >= excess or len(doomed) >= numbers.count - 1
                    or (retained_after is not None and entry_ts(raw).time > retained_after)):
                first_kept = raw
                break
            doomed.append((layout.rid_of_record_key(key), raw))
            freed += len(raw)
        for rid, raw in doomed:
            remove_raw(batch, coll, rid, raw)
        if first_kept is not None:
            expire_before(batch, entry_ts(first_kept))

    # ------------------------------------------------------------------ no-ops (replication)
    def append_noop(self, o: dict, o2: Optional[dict] = None) -> Timestamp:
        """Write an `op: n` entry (e.g. {msg: "initiating set"}); returns its ts."""
        with self._engine.write() as batch:
            coll = batch.catalog.collection(DB, COLL)
            if coll is None or not self.enabled:
                raise RuntimeError("the oplog is turned off")
            self._continue_clock(batch, coll)
            secs, first = self._engine.clock.reserve(1)
            ts = Timestamp(secs, first)
            wall_ms = int(time.time() * 1000)
            self._next_rid = append_raws(batch, coll, [E.finish(b"", self._builder.noop(o, o2), ts,
                                                                E.tail(self.term, wall_ms))])
            batch.commit_ts = ts
        return ts

    # ------------------------------------------------------------------ reading
    def _collection(self, snap: Any) -> Optional[Collection]:
        return self._engine.catalog_for(snap).collection(DB, COLL)

    def _with_snapshot(self, fn: Any) -> Any:
        with self._engine.read() as view:
            coll = view.collection(DB, COLL)
            return None if coll is None else fn(view.snapshot, coll)

    @property
    def first_ts(self) -> Optional[Timestamp]:
        def first(snap: Any, coll: Collection) -> Optional[Timestamp]:
            entry = _first_entry(snap, coll)
            return None if entry is None else entry_ts(entry[1])
        return self._with_snapshot(first)

    @property
    def last_ts(self) -> Optional[Timestamp]:
        def last(snap: Any, coll: Collection) -> Optional[Timestamp]:
            entry = _last_entry(snap, coll)
            return None if entry is None else entry_ts(entry[1])
        return self._with_snapshot(last)

    @property
    def used_bytes(self) -> int:
        return self._with_snapshot(lambda snap, coll: read_numbers(snap, coll.meta.id).size) or 0

    @property
    def count(self) -> int:
        return self._with_snapshot(lambda snap, coll: read_numbers(snap, coll.meta.id).count) or 0

    @property
    def signal(self) -> Any:
        return self._engine.commit_signal

    def status(self) -> dict:
        """What replication reports: {maxBytes, usedBytes, count, first, last} (ts or None)."""
        return {"maxBytes": self.max_bytes, "usedBytes": self.used_bytes, "count": self.count,
                "first": self.first_ts, "last": self.last_ts}


# ------------------------------------------------------------------ positions (for readers)
def _first_entry(snap: Any, coll: Collection) -> Optional[tuple[int, bytes]]:
    for key, value in snap.scan(coll.record_prefix, prefix_end(coll.record_prefix)):
        return layout.rid_of_record_key(key), document(value)
    return None


def _last_entry(snap: Any, coll: Collection) -> Optional[tuple[int, bytes]]:
    for key, value in snap.scan(coll.record_prefix, prefix_end(coll.record_prefix), reverse=True):
        return layout.rid_of_record_key(key), document(value)
    return None


def first_entry(snap: Any, coll: Collection) -> Optional[tuple[int, bytes]]:
    """(record id, bytes) of the oldest entry, or None."""
    return _first_entry(snap, coll)


def last_entry(snap: Any, coll: Collection) -> Optional[tuple[int, bytes]]:
    return _last_entry(snap, coll)


def rid_at_or_after(snap: Any, coll: Collection, ts: Timestamp) -> Optional[int]:
    """The record id of the first entry whose ts >= `ts` (None: none yet). Record ids between the
    first and the last entry are contiguous and ordered like ts, so this is a binary search."""
    first, last = _first_entry(snap, coll), _last_entry(snap, coll)
    if first is None or last is None:
        return None
    if entry_ts(last[1]) < ts:
        return None
    lo, hi = first[0], last[0]
    while lo < hi:
        mid = (lo + hi) // 2
        value = snap.get(coll.record_key(mid))
        if value is None:           # truncated meanwhile: the answer is after it
            lo = mid + 1
        elif entry_ts(document(value)) < ts:
            lo = mid + 1
        else:
            hi = mid
    return lo


def entries_from(snap: Any, coll: Collection, rid: int) -> Iterator[tuple[int, bytes]]:
    for key, value in snap.scan(coll.record_key(rid), prefix_end(coll.record_prefix)):
        yield layout.rid_of_record_key(key), document(value)


def _keeps_preimages(batch: WriteBatch, ns: str, uuid: Any) -> bool:
    db, _, name = ns.partition(".")
    meta = batch.catalog.get(db, name)
    if meta is None or meta.uuid != uuid:
        return False
    option = meta.options.get("changeStreamPreAndPostImages")
    return isinstance(option, dict) and bool(option.get("enabled"))
