"""WriteBatch: the unit of change. Every write to storage goes through one.

A batch is one storage write transaction plus what it means: the logical operations it applied
(inserts, updates with both images, deletes, catalog changes, in order), the catalog as this
batch sees it (a private copy once it changes anything), and the per-collection numbers it
moves (next record id, document count, data size), persisted in the same transaction. The
engine commits it (engine.write()): observers run before the storage commit (the oplog writes
there) and after it (change streams wake there); the catalog copy is published only after the
storage commit succeeded. An aborted batch leaves no trace anywhere (docs/design/seams.md).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Optional, Union

from ..bsonutil.delta import compute_diff, compute_diff_decoded
from ..storage.kv import Txn, prefix_end
from . import layout, record_format
from .catalog import Catalog, CollectionMeta

if TYPE_CHECKING:
    from .collection import Collection


# -- logical operations ---------------------------------------------------------------------
# Named tuples, not frozen dataclasses: a batch makes one per document written, and a frozen
# dataclass's __init__ sets each field through object.__setattr__.
class Insert(NamedTuple):
    ns: str
    uuid: Any
    rid: int
    doc: bytes              # the stored BSON


class Update(NamedTuple):
    ns: str
    uuid: Any
    rid: int
    before: bytes
    after: bytes
    #: how the new document was made: "update" (operators), "pipeline" or "replace"; the oplog
    #: logs the first two as a diff and a replacement as the whole document
    kind: str = "update"
    #: the decoded images, when the writer has them (they let the oplog diff without decoding)
    old: Any = None
    new: Any = None
    #: the diff, made when the update was written instead of keeping the images (b"": none)
    made_diff: Optional[bytes] = None
    #: the top-level fields the update may have changed (UpdatePlan.top_fields), when known
    touched: Optional[frozenset] = None

    def diff(self) -> Optional[bytes]:
        """The $v:2 diff the oplog logs for this update, or None to log the whole new document
        (a replacement, or a diff not smaller than the document after a pipeline)."""
        if self.made_diff is not None:
            return self.made_diff or None
        if self.kind == "replace":
            return None
        ignore = self.kind != "pipeline"
        if self.old is not None and self.new is not None:
            return compute_diff_decoded(self.old, self.new, self.after, ignore_size_limit=ignore,
                                        touched=self.touched)
        return compute_diff(self.before, self.after, ignore_size_limit=ignore)


class Delete(NamedTuple):
    ns: str
    uuid: Any
    rid: int
    before: bytes


@dataclass(frozen=True, slots=True)
class CatalogChange:
    kind: str               # create, drop, rename, createIndexes, dropIndexes, collMod, multikey,
    ns: str                 # dropDatabase (ns "<db>.$cmd")
    info: dict = field(default_factory=dict)
    uuid: Any = None        # the collection's UUID


Op = Union[Insert, Update, Delete, CatalogChange]


# -- per-collection numbers -------------------------------------------------------------------
_STATS = struct.Struct(">QQQ")  # next record id, documents, data bytes (storage-layout.md)


class CollectionNumbers:
    """The persisted numbers of one collection, as this batch moves them."""

    __slots__ = ("next_rid", "count", "size", "dirty", "key")

    def __init__(self, next_rid: int, count: int, size: int, key: Optional[bytes] = None) -> None:
        self.next_rid, self.count, self.size, self.dirty = next_rid, count, size, False
        #: where they are stored, when known (read_numbers): `prepare` writes them there
        self.key = key

    def pack(self) -> bytes:
        return _STATS.pack(self.next_rid, self.count, self.size)


def read_numbers(snap: Any, coll_id: int) -> CollectionNumbers:
    """A collection's numbers as `snap` stores them; counted from its records (once) when a data
    directory predates them."""
    key = layout.coll_stats_key(coll_id)
    raw = snap.get(key)
    if raw is not None:
        next_rid, count, size = _STATS.unpack(raw)
        return CollectionNumbers(next_rid, count, size, key)
    prefix = layout.record_prefix(coll_id)
    count = size = 0
    last = b""
    for key, value in snap.scan(prefix, prefix_end(prefix)):
        count += 1
        size += record_format.document_size(value)
        last = key
    # a clustered collection's record keys are not numbers (clustered.py): its next id is unused
    next_rid = layout.rid_of_record_key(last) + 1 if len(last) == 5 + layout.RID_WIDTH else 1
    numbers = CollectionNumbers(next_rid, count, size, key)
    numbers.dirty = True  # worth storing at the next write
    return numbers


class WriteBatch:
    """One storage write transaction and the logical changes it makes."""

    #: whether the batch is one statement of a multi-document transaction (TransactionBatch)
    in_transaction = False

    #: the codec of collections created without `storageEngine` (the engine's `compression`), and
    #: whether the engine compresses at all (the in-memory engine does not); set by the engine
    default_compression = "none"
    compresses = False

    #: how many updates keep their decoded images until commit (the oplog diffs them then); past
    #: it an update's diff is made at once and the images dropped, so a multi-update of many
    #: documents holds their BSON, not ~10x as much in Python objects
    images_kept = 1024

    def __init__(self, txn: Txn, catalog: Catalog, conflicts: Any = None) -> None:
        self.txn = txn
        self.ops: list[Op] = []
        #: keys this batch changed that a transaction could conflict with (docs/design/transactions.md)
        self.claims: list[bytes] = []
        self._conflicts = conflicts
        self._base_catalog = catalog
        self._numbers: dict[int, CollectionNumbers] = {}
        # the other fields start as the class's defaults below (a batch per write: each field
        # set here costs every insert_one)

    #: what the operation running in this batch answers (stored with retryable writes)
    result: Any = None
    #: the batch's cluster time, stamped just before it commits (when it changed anything)
    commit_ts: Any = None
    #: the session of a transaction or retryable write this batch commits ({lsid, txnNumber,
    #: stmtIds}), for the oplog and change streams; None for an ordinary write
    txn_info: Optional[dict] = None
    #: a secondary applying the primary's oplog: these entries (raw BSON, in order) are
    #: appended to the oplog as they are, instead of entries made from `ops` (oplog_apply.py)
    replicated: Optional[list[bytes]] = None
    _catalog: Optional[Catalog] = None      # the private copy, once edited
    #: the numbers the engine kept from its last commit, valid for this batch (known_numbers.py)
    _known: Optional[dict[int, CollectionNumbers]] = None
    #: the collections this batch dropped (a tuple until the first: never shared, only replaced)
    _forgotten: tuple[int, ...] = ()
    _base_version: Optional[int] = None
    _next_id: Optional[int] = None
    _images = 0

    # -- the catalog as this batch sees it -----------------------------------------------------
    @property
    def catalog(self) -> Catalog:
        return self._catalog if self._catalog is not None else self._base_catalog

    @property
    def catalog_changed(self) -> bool:
        return self._catalog is not None

    def collection(self, db: str, name: str) -> Optional[Collection]:
        return self.catalog.collection(db, name)

    def _editable(self) -> Catalog:
        if self._catalog is None:
            self._catalog = self._base_catalog.edit()
        return self._catalog

    def save_meta(self, meta: CollectionMeta, kind: str, **info: Any) -> None:
        """Store a new or changed catalog entry (and record the change)."""
        self._editable().put(meta)
        self.txn.put(layout.catalog_key(meta.db, meta.name), meta.to_bson())
        self.ops.append(CatalogChange(kind, meta.ns, info, meta.uuid))

    def remove_meta(self, meta: CollectionMeta, kind: str, **info: Any) -> None:
        self._editable().remove(meta.db, meta.name)
        self.txn.delete(layout.catalog_key(meta.db, meta.name))
        self.ops.append(CatalogChange(kind, meta.ns, info, meta.uuid))

    def dropped_database(self, db: str) -> None:
        """Record a dropDatabase (after the drops of its collections)."""
        self.ops.append(CatalogChange("dropDatabase", f"{db}.$cmd"))

    def alloc_id(self) -> int:
        """A new collection or index id, from the persisted counter."""
        if self._next_id is None:
            raw = self.txn.get(layout.META_NEXT_ID)
            self._next_id = layout.unpack_u64(raw) if raw else 1
        n = self._next_id
        self._next_id += 1
        self.txn.put(layout.META_NEXT_ID, layout.pack_u64(self._next_id))
        return n

    # -- documents -----------------------------------------------------------------------------
    def claim(self, key: bytes) -> None:
        """Note a key this batch changes; wait for the transaction that holds it, if any."""
        self.claims.append(key)
        conflicts = self._conflicts
        if conflicts is not None and conflicts.active:
            conflicts.check_ordinary((key,))

    def numbers(self, coll_id: int) -> CollectionNumbers:
        numbers = self._numbers.get(coll_id)
        if numbers is None:
            known = self._known
            kept = known.get(coll_id) if known is not None else None
            if kept is not None and (not self._forgotten or coll_id not in self._forgotten):
                numbers = self._numbers[coll_id] = CollectionNumbers(kept.next_rid, kept.count, kept.size, kept.key)
            else:
                numbers = self._numbers[coll_id] = read_numbers(self.txn, coll_id)
        return numbers

    def numbers_for_new(self, coll_id: int, next_rid: int) -> CollectionNumbers:
        """The numbers of a collection this batch creates with records already numbered."""
        numbers = self._numbers[coll_id] = CollectionNumbers(next_rid, 0, 0)
        numbers.dirty = True
        return numbers

    def alloc_rid(self, coll: Collection, doc: dict) -> Any:
        """The record id for a new document: the next number, or a clustered collection's `_id` key."""
        numbers = self.numbers(coll.meta.id)   # read before the record is written (read_numbers)
        clustered = coll.new_rid(doc)
        if clustered is not None:
            return clustered
        rid = numbers.next_rid
        numbers.next_rid += 1
        numbers.dirty = True
        return rid

    def inserted(self, coll: Collection, rid: int, raw: bytes) -> None:
        numbers = self.numbers(coll.meta.id)
        numbers.count += 1
        numbers.size += len(raw)
        numbers.dirty = True
        meta = coll.meta
        self.ops.append(Insert(meta.ns, meta.uuid, rid, raw))

    def updated(self, coll: Collection, rid: int, before: bytes, after: bytes,
                kind: str = "update", old: Any = None, new: Any = None,
                touched: Optional[frozenset] = None) -> None:
        numbers = self.numbers(coll.meta.id)
        numbers.size += len(after) - len(before)
        numbers.dirty = True
        meta = coll.meta
        op = Update(meta.ns, meta.uuid, rid, before, after, kind, old, new, None, touched)
        if old is not None:
            self._images += 1
            if self._images > self.images_kept:
                op = op._replace(old=None, new=None, made_diff=op.diff() or b"")
        self.ops.append(op)

    def deleted(self, coll: Collection, rid: int, before: bytes) -> None:
        numbers = self.numbers(coll.meta.id)
        numbers.count -= 1
        numbers.size -= len(before)
        numbers.dirty = True
        meta = coll.meta
        self.ops.append(Delete(meta.ns, meta.uuid, rid, before))

    def forget_numbers(self, coll_id: int) -> None:
        """A dropped collection's numbers go with it."""
        self._numbers.pop(coll_id, None)
        self._forgotten = (*self._forgotten, coll_id)
        self.txn.delete(layout.coll_stats_key(coll_id))

    # -- commit (called by the engine) ---------------------------------------------------------
    def prepare(self) -> None:
        """Write what the batch kept in memory into its transaction, just before it commits."""
        put, pack = self.txn.put, _STATS.pack
        for coll_id, numbers in self._numbers.items():
            if numbers.dirty:
                put(numbers.key or layout.coll_stats_key(coll_id), pack(numbers.next_rid, numbers.count, numbers.size))
        if self._catalog is not None:
            put(layout.META_CATALOG_GEN, layout.pack_u64(self._catalog.gen))
