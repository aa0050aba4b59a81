"""Multi-document transactions: a KeyBatch over a snapshot until one write batch commits it.

A `Transaction` reads its snapshot plus its own writes and keeps a private copy of the catalog;
commands inside it run against a `TransactionView`, which offers the engine's operations over
the transaction, so the same write and read code serves both (docs/design/transactions.md).
Nothing here holds the engine lock except the commit itself.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Optional

from ..errors import CommandError, ErrorCode
from ..storage.batch import KeyBatch
from ..storage.kv import prefix_end
from . import layout
from .batch import CatalogChange, CollectionNumbers, WriteBatch
from .catalog import Catalog
from .catalog_entries import CollectionMeta
from .chunked_reader import ChunkedReader
from .conflicts import TRANSIENT, write_conflict
from .operations import EngineOperations
from .oplog_entries import doc, e_i64

#: record ids a transaction reserves from a collection's persisted counter at a time
RID_RESERVATION = 64


class Transaction:
    """One open multi-document transaction."""

    def __init__(self, engine: Any, txn_info: dict) -> None:
        self.engine = engine
        self.txn_info = txn_info
        self.id, self.snapshot_seq = engine.conflicts.open()
        self.snapshot = engine.kv.snapshot()
        self.keys = KeyBatch()
        self.overlay = self.keys.overlay(self.snapshot)
        self.base_catalog: Catalog = engine.catalog_for(self.snapshot)
        self.catalog: Catalog = self.base_catalog.edit()
        self.ops: list = []
        self.deltas: dict[int, CollectionNumbers] = {}   # coll id -> count/size change, rids
        self.reserved: dict[int, list[int]] = {}          # coll id -> [next, end) reserved rids
        self.written: dict[int, CollectionMeta] = {}      # coll id -> the entry it wrote against
        self.created: dict[int, CollectionMeta] = {}      # coll id -> a collection it created
        self.multikey: dict[int, dict[str, frozenset]] = {}
        self.ids: list[int] = []                          # reserved collection/index ids
        self.claimed: list[bytes] = []                    # what it claimed (checked again at commit)
        self.started = time.monotonic()
        self.open = True
        self.lock = threading.RLock()

    @property
    def read_only(self) -> bool:
        return not self.ops

    # -- id reservations (a tiny committed batch each: no collision with any other writer) ---
    def next_rid(self, coll_id: int) -> int:
        if coll_id in self.created:
            numbers = self.deltas[coll_id]
            rid = numbers.next_rid
            numbers.next_rid += 1
            return rid
        window = self.reserved.get(coll_id)
        if window is None or window[0] >= window[1]:
            start = self.engine.reserve_rids(coll_id, RID_RESERVATION)
            window = self.reserved[coll_id] = [start, start + RID_RESERVATION]
        rid = window[0]
        window[0] += 1
        return rid

    def next_id(self) -> int:
        if not self.ids:
            start = self.engine.reserve_ids(8)
            self.ids = list(range(start, start + 8))
        return self.ids.pop(0)

    def base_catalog_entry(self, meta: CollectionMeta) -> CollectionMeta:
        """The entry of a collection as the transaction's snapshot holds it."""
        base = self.base_catalog.get(meta.db, meta.name)
        return base if base is not None and base.id == meta.id else meta

    def release(self) -> None:
        self.open = False
        self.snapshot.release()


class TransactionBatch(WriteBatch):
    """The write batch of one statement inside a transaction: writes go into the transaction's
    key batch, claims to the conflict table, numbers into deltas, catalog changes into its
    private catalog (replayed by the commit)."""

    in_transaction = True

    def __init__(self, txn: Transaction) -> None:
        super().__init__(txn.overlay, txn.catalog, None)
        self._txn = txn
        self._catalog = txn.catalog  # already private: no copy per statement
        self.default_compression = txn.engine.default_compression
        self.compresses = txn.engine.kv.durable

    def claim(self, key: bytes) -> None:
        self._txn.engine.conflicts.claim_for_transaction(self._txn.id, (key,))
        self._txn.claimed.append(key)

    def numbers(self, coll_id: int) -> CollectionNumbers:
        numbers = self._txn.deltas.get(coll_id)
        if numbers is None:
            numbers = self._txn.deltas[coll_id] = CollectionNumbers(0, 0, 0)
        return numbers

    def alloc_rid(self, coll: Any, doc: dict) -> Any:
        self._note_written(coll.meta)
        clustered = coll.new_rid(doc)
        return clustered if clustered is not None else self._txn.next_rid(coll.meta.id)

    def alloc_id(self) -> int:
        return self._txn.next_id()

    def _note_written(self, meta: CollectionMeta) -> None:
        if meta.options.get("capped"):
            raise CommandError(ErrorCode.OperationNotSupportedInTransaction,
                               f"Collection '{meta.ns}' is a capped collection. Writes in transactions are not "
                               "allowed on capped collections.")
        if meta.name.startswith("system."):
            raise CommandError(ErrorCode.OperationNotSupportedInTransaction,
                               f"Cannot write to system collection {meta.ns} within a transaction.")
        if meta.id not in self._txn.written and meta.id not in self._txn.created:
            self._txn.written[meta.id] = self._txn.base_catalog_entry(meta)

    def inserted(self, coll: Any, rid: int, raw: bytes) -> None:
        self._note_written(coll.meta)
        super().inserted(coll, rid, raw)

    def updated(self, coll: Any, rid: int, before: bytes, after: bytes, kind: str = "update", old: Any = None,
                new: Any = None, touched: Optional[frozenset] = None) -> None:
        self._note_written(coll.meta)
        super().updated(coll, rid, before, after, kind, old, new, touched)

    def deleted(self, coll: Any, rid: int, before: bytes) -> None:
        self._note_written(coll.meta)
        super().deleted(coll, rid, before)

    def save_meta(self, meta: CollectionMeta, kind: str, **info: Any) -> None:
        txn = self._txn
        if kind == "create" and meta.options.get("capped"):
            raise CommandError(ErrorCode.OperationNotSupportedInTransaction,
                               "Cannot create a capped collection in a multi-document transaction.")
        if kind == "create":
            txn.created[meta.id] = meta
            txn.deltas[meta.id] = CollectionNumbers(1, 0, 0)
        elif kind == "multikey" and meta.id not in txn.created:
            grown = txn.multikey.setdefault(meta.id, {})
            for ix in meta.indexes:
                if ix.multikey_paths:
                    grown[ix.name] = ix.multikey_paths
        elif meta.id in txn.created:
            txn.created[meta.id] = meta  # e.g. createIndexes on a collection it created
        else:
            raise CommandError(ErrorCode.OperationNotSupportedInTransaction,
                               f"Cannot run '{kind}' on an existing collection in a multi-document "
                               "transaction.")
        self._txn.catalog.put(meta)
        self.ops.append(CatalogChange(kind, meta.ns, info))

    def remove_meta(self, meta: CollectionMeta, kind: str, **info: Any) -> None:
        raise CommandError(ErrorCode.OperationNotSupportedInTransaction,
                           f"Cannot run '{kind}' in a multi-document transaction.")

    def forget_numbers(self, coll_id: int) -> None:
        raise CommandError(ErrorCode.OperationNotSupportedInTransaction,
                           "Cannot drop a collection in a multi-document transaction.")

    def prepare(self) -> None:
        """Nothing to write now: the commit applies the transaction's changes."""


class _StatementWrite:
    """TransactionView.write's block (a class, not a generator: every statement enters it)."""

    __slots__ = ("_txn", "_batch")

    def __init__(self, txn: Transaction) -> None:
        self._txn = txn

    def __enter__(self) -> TransactionBatch:
        batch = self._batch = TransactionBatch(self._txn)
        return batch

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if kind is None:
            self._txn.ops.extend(self._batch.ops)


class _TransactionCursors:
    """The engine's cursor manager, marking cursors opened in the transaction as its own."""

    def __init__(self, cursors: Any, txn_id: int) -> None:
        self._cursors, self._txn_id = cursors, txn_id

    def register(self, cursor: Any) -> int:
        cursor.owner_txn = self._txn_id
        return self._cursors.register(cursor)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursors, name)


class TransactionView(EngineOperations):
    """The engine's operations, run inside one transaction."""

    def __init__(self, engine: Any, txn: Transaction) -> None:
        self._engine = engine
        self.txn = txn
        self.kv = engine.kv
        self.cursors = _TransactionCursors(engine.cursors, txn.id)
        self.conflicts = engine.conflicts
        self.clock = engine.clock

    @property
    def catalog(self) -> Catalog:
        return self.txn.catalog

    def catalog_for(self, snap: Any) -> Catalog:
        return self.txn.catalog

    def collection(self, db: str, name: str) -> Any:
        return self.txn.catalog.collection(db, name)

    def write(self, reclaims: bool = False) -> _StatementWrite:
        """A statement's batch; its operations join the transaction's when the block ends
        without error."""
        txn = self.txn
        if not txn.open:
            raise CommandError(ErrorCode.NoSuchTransaction, "the transaction is no longer open",
                               labels=TRANSIENT)
        return _StatementWrite(txn)

    def reader(self, txn: Any = None) -> ChunkedReader:
        return ChunkedReader(self, self.txn.overlay)

    def sync(self) -> None:
        self._engine.sync()


# -- commit ------------------------------------------------------------------------------------
def commit(engine: Any, txn: Transaction) -> None:
    """Apply the transaction in one write batch, or raise WriteConflict (it is then aborted)."""
    try:
        if txn.read_only:
            return
        with engine.write() as batch:
            _check_catalog(batch, txn)
            if engine.kv.commits_elsewhere_since(txn.snapshot, batch.txn):
                _check_unchanged_elsewhere(batch, txn)
            for coll_id, delta in txn.deltas.items():  # before the records land: rows read as they were
                if coll_id in txn.created:
                    numbers = batch.numbers_for_new(coll_id, delta.next_rid)
                else:
                    numbers = batch.numbers(coll_id)
                numbers.count += delta.count
                numbers.size += delta.size
                numbers.dirty = True
            batch.txn.apply(txn.keys)
            for meta in txn.created.values():
                batch.save_meta(meta, "create", options=dict(meta.options))
            for coll_id, grown in txn.multikey.items():
                _merge_multikey(batch, txn, coll_id, grown)
            batch.ops = list(txn.ops)
            batch.txn_info = dict(txn.txn_info)
            _record_commit(batch, txn.txn_info)
            batch.claims = []  # the transaction's keys are released with it, below
        seq = engine.conflicts.next_seq()
        engine.conflicts.close(txn.id, committed_at=seq)
    except BaseException:
        engine.conflicts.close(txn.id)
        raise
    finally:
        txn.release()


def _record_commit(batch: WriteBatch, info: dict) -> None:
    """The session's record {txnNumber, committedTransaction} (mongod's config.transactions
    "committed"), in the commit's own storage transaction: a commitTransaction retried after this
    member restarts answers ok instead of 251 NoSuchTransaction (commands/transactions.py reads
    it), as it does on a member that applied the transaction's oplog entry (oplog_apply.py)."""
    key = layout.session_key(info.get("lsid"))
    if key is None or "txnNumber" not in info:
        return
    # {txnNumber: <long>, committedTransaction: true}, built as bytes (bson.encode's checks cost
    # more than the two elements)
    record = doc(e_i64(b"txnNumber", int(info["txnNumber"])) + b"\x08committedTransaction\x00\x01")
    batch.txn.put(layout.retryable_write_key(key), record)


def abort(engine: Any, txn: Transaction) -> None:
    if txn.open:
        engine.conflicts.close(txn.id)
        txn.release()


def _check_catalog(batch: WriteBatch, txn: Transaction) -> None:
    """A collection the transaction created must still be absent; one it wrote must still be the
    same collection with the same indexes (their entries were kept by the transaction)."""
    for meta in txn.created.values():
        if batch.catalog.get(meta.db, meta.name) is not None:
            raise write_conflict(f"Collection {meta.ns} was created by another operation while the "
                                 "transaction was open; please retry the transaction")
    for coll_id, seen in txn.written.items():
        now = batch.catalog.get(seen.db, seen.name)
        if now is None or now.id != coll_id or {ix.id for ix in now.indexes} != {ix.id for ix in seen.indexes}:
            raise write_conflict("Unable to write to collection due to catalog changes; please retry the "
                                 "operation")


def _check_unchanged_elsewhere(batch: WriteBatch, txn: Transaction) -> None:
    """Another process committed since the snapshot, unseen by this process's conflict table:
    first writer wins there too. Every key the transaction claimed (a document it changes, a
    unique-index key it adds) must hold what the snapshot held (docs/design/multiprocess.md)."""
    snapshot, now = txn.snapshot, batch.txn
    for key in dict.fromkeys(txn.claimed):
        end = prefix_end(key)   # a record key is the only key of its range; a unique key's entries
        if list(snapshot.scan(key, end)) != list(now.scan(key, end)):
            raise write_conflict()


def _merge_multikey(batch: WriteBatch, txn: Transaction, coll_id: int, grown: dict) -> None:
    for meta in batch.catalog.all():
        if meta.id == coll_id:
            indexes = [ix.evolve(multikey_paths=ix.multikey_paths | grown[ix.name]) if ix.name in grown else ix
                       for ix in meta.indexes]
            if any(a is not b for a, b in zip(indexes, meta.indexes)):
                batch.save_meta(meta.evolve(indexes=indexes), "multikey")
            return


def reserve_rids(engine: Any, coll_id: int, n: int) -> int:
    """Advance a collection's persisted record-id counter by `n`; the first id of the range."""
    with engine.write() as batch:
        numbers = batch.numbers(coll_id)
        start = numbers.next_rid
        numbers.next_rid += n
        numbers.dirty = True
    return start


def reserve_ids(engine: Any, n: int) -> int:
    with engine.write() as batch:
        raw = batch.txn.get(layout.META_NEXT_ID)
        start = layout.unpack_u64(raw) if raw else 1
        batch.txn.put(layout.META_NEXT_ID, layout.pack_u64(start + n))
    return start


def lifetime_expired(txn: Transaction, limit_seconds: float) -> bool:
    return time.monotonic() - txn.started > limit_seconds


__all__ = ["Transaction", "TransactionView", "abort", "commit", "lifetime_expired", "reserve_ids",
           "reserve_rids"]
