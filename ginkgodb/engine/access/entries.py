"""What every index kind shares: its entries in storage, uniqueness, duplicate-key errors.

An entry is `layout.index_prefix(id) + encoded key + record id` with an empty value, for unique and
non-unique indexes alike; uniqueness is checked by a prefix scan before anything is written, so a
document and all its index entries are written together or not at all. A kind supplies
`document_keys` (and the planner's side, `usable`/`plan`/`hinted`).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Optional

from ...bsonutil import keycodec
from ...bsonutil.sentinels import ABSENT
from ...bsonutil.shell_format import DUP_KEY, format_document
from ...errors import CommandError, ErrorCode
from ...storage.kv import prefix_end
from .. import layout
from ..catalog_entries import IndexMeta
from ..record_ids import INT_RIDS

MAX_INDEX_KEY = 480  # bytes of encoded key; LMDB keys are limited to 511 in all


class IndexEntries:
    """One index's stored entries and the checks around them. Immutable, like its IndexMeta."""

    kind: ClassVar[str] = ""
    rids: Any = INT_RIDS   # how entries end (record_ids.py); a clustered collection's handle sets it
    #: the top-level field (its BSON name) whose value alone makes this index's one key, when a
    #: document's key may come from that value read out of its bytes (`simple_key`); None: the
    #: keys need the decoded document
    raw_field: Optional[bytes] = None

    def __init__(self, meta: IndexMeta, ns: str) -> None:
        self.meta = meta
        self.ns = ns
        self.prefix = layout.index_prefix(meta.id)
        self.pattern = meta.pattern
        self.directions = [(-1 if d < 0 else 1) if isinstance(d, (int, float)) else 1 for _, d in self.pattern]
        self._partial = None
        self.collation = meta.collation
        if meta.partial is not None:
            from ...query.match import compile_filter
            self._partial = compile_filter(meta.partial, where=False)
        # top-level fields the keys (and a partial filter) depend on
        roots = {f.split(".", 1)[0] for f, _ in self.pattern}
        self._roots = None if self._partial is not None else roots  # a partial filter reads anything

    # -- keys ---------------------------------------------------------------------------------
    def keys(self, doc: dict) -> tuple[list[bytes], set]:
        """Encoded keys of `doc` (empty when a partial/sparse index excludes it) and multikey paths."""
        if self._partial is not None and not self._partial(doc):
            return [], set()
        if self.collation is not None:
            doc = self.collation.transform(doc)  # strings are indexed by their collation keys
        return self.document_keys(doc)

    def document_keys(self, doc: dict) -> tuple[list[bytes], set]:
        raise NotImplementedError

    def unchanged(self, old: dict, new: dict) -> bool:
        """True when an update left every field this index reads as the very same object (the
        update engine copies only what it changes), so the keys cannot have changed."""
        roots = self._roots
        if roots is None:
            return False
        return all(old.get(r, ABSENT) is new.get(r, ABSENT) for r in roots)

    # -- entries ------------------------------------------------------------------------------
    def rid_of_entry(self, entry: bytes) -> Any:
        """The record id an entry (with its prefix) points to."""
        return self.rids.of_entry(entry)

    def key_of_entry(self, entry: bytes) -> bytes:
        """The encoded key of an entry (with its prefix)."""
        return self.rids.key_of_entry(entry, len(self.prefix))

    def check_keys(self, txn: Any, keys: list[bytes], rid: Any, doc: dict) -> None:
        """What a document's new keys must meet before anything of its statement is written:
        each fits an entry (17280) and a unique index holds no other document's (11000). Checked
        first, so a statement that fails leaves no record and no entry behind."""
        for key in keys:
            if len(key) > MAX_INDEX_KEY:
                raise _key_too_large(len(key), self.meta.name)
        self.check_unique(txn, keys, rid, doc)

    def check_unique(self, txn: Any, keys: Iterable[bytes], rid: Any, doc: dict) -> None:
        # collMod's prepareUnique: new duplicates are refused before the index becomes unique
        if not (self.meta.unique or self.meta.options.get("prepareUnique")):
            return
        own = self.rids.suffix(rid)
        for key in keys:
            lo = self.prefix + key
            hi = prefix_end(lo)
            entry = txn.first(lo, hi)
            if entry is not None and entry[len(lo):] == own:
                entry = txn.first(entry + b"\x00", hi)  # our own entry: is there another?
            if entry is not None:
                raise self.duplicate_error(key, doc)

    def duplicate_error(self, key: bytes, doc: dict) -> CommandError:
        values = keycodec.decode_key(key, self.directions)
        key_value = {field: _original(doc, field, v) for (field, _), v in zip(self.pattern, values)}
        msg = (f"E11000 duplicate key error collection: {self.ns} index: {self.meta.name} "
               f"dup key: {format_document(key_value, DUP_KEY)}")
        return CommandError(ErrorCode.DuplicateKey, msg,
                            info={"keyPattern": dict(self.meta.key), "keyValue": key_value})

    def add(self, txn: Any, keys: Iterable[bytes], rid: Any) -> None:
        """Write the entries of keys `check_keys` accepted."""
        suffix = self.rids.suffix(rid)
        for key in keys:
            txn.put(self.prefix + key + suffix, b"")

    def add_entries(self, txn: Any, entries: Iterable[bytes]) -> None:
        """Write whole entries (key + record id), sorted, as an index build does (one pass:
        `entries` may be the build's merge; a key too large raises in the middle, and the
        build's batch, aborted, leaves nothing behind)."""
        prefix, key_of, name = self.prefix, self.rids.key_of_entry, self.meta.name

        def pairs() -> Iterable[tuple[bytes, bytes]]:
            for entry in entries:
                if len(entry) > MAX_INDEX_KEY:     # the entry bounds its key: measure only then
                    size = len(key_of(entry, 0))
                    if size > MAX_INDEX_KEY:
                        raise _key_too_large(size, name)
                yield prefix + entry, b""

        txn.put_many(pairs())

    def remove(self, txn: Any, keys: Iterable[bytes], rid: Any) -> None:
        suffix = self.rids.suffix(rid)
        for key in keys:
            txn.delete(self.prefix + key + suffix)

    def remove_one(self, txn: Any, key: bytes, rid: Any) -> bool:
        """Remove one entry; False when it was not there."""
        return txn.delete(self.prefix + key + self.rids.suffix(rid))

    def simple_key(self, value: Any) -> Optional[bytes]:
        """The one key of a document whose `raw_field` holds `value`, or None when the value
        (missing, null, an array, a document) needs `keys` (only kinds with a raw_field)."""
        return None

    def entry_count(self, txn: Any) -> int:
        return sum(1 for _ in txn.scan(self.prefix, prefix_end(self.prefix)))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.ns} {self.meta.name}>"


def _key_too_large(size: int, name: str) -> CommandError:
    return CommandError(ErrorCode.OBSOLETE_KeyTooLong,
                        f"key too large to index, failing {size} bytes (limit {MAX_INDEX_KEY}) in index {name}")


def _original(doc: dict, field: str, decoded: Any) -> Any:
    """The document's own value for a key field when it is a plain scalar (keeps its type)."""
    cur: Any = doc
    for part in field.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return decoded
        cur = cur[part]
    if isinstance(cur, (list, dict)):
        return decoded
    return cur
