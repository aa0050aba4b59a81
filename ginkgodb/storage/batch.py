"""KeyBatch: key-level puts and deletes held as a value (LevelDB's WriteBatch).

A batch remembers the last write per key (a value, or None for a delete) in key order, so it can
be read back (`get`, `scan` over its own keys) and merged over a snapshot (`overlay`): that is
what a multi-document transaction reads while its writes wait to be applied in one storage
transaction (`Txn.apply`).
"""
from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Optional

from sortedcontainers import SortedList

from .kv import Snapshot, Txn

_ABSENT = object()
#: writes a range probe looks through one by one rather than ordering them
_FEW = 16


class KeyBatch:
    """Ordered puts (bytes) and deletes (None), the last write per key winning.

    The writes are a plain dict; their key order (a SortedList) is made only when a range is
    first read, and kept from then on: a transaction that reads no range of its own writes, the
    commonest, never pays for it (a SortedDict costs ten times a dict to make and to fill)."""

    __slots__ = ("_ops", "_order")

    def __init__(self) -> None:
        self._ops: dict[bytes, Optional[bytes]] = {}
        self._order: Optional[SortedList] = None

    def _set(self, key: bytes, value: Optional[bytes]) -> None:
        ops = self._ops
        if self._order is not None and key not in ops:
            self._order.add(key)
        ops[key] = value

    def put(self, key: bytes, value: bytes) -> None:
        self._set(bytes(key), bytes(value))

    def put_many(self, pairs: list) -> None:
        """Many puts at once (the key order, if made, takes the new keys in one update)."""
        ops = self._ops
        if self._order is not None:
            self._order.update(dict.fromkeys(key for key, _ in pairs if key not in ops))
        ops.update(pairs)

    def delete(self, key: bytes) -> None:
        self._set(bytes(key), None)

    def lookup(self, key: bytes) -> object:
        """The batch's value for `key`: bytes, None (deleted here), or ABSENT (not in the batch)."""
        return self._ops.get(key, _ABSENT)

    def items(self) -> Iterator[tuple[bytes, Optional[bytes]]]:
        """The writes in key order."""
        ops = self._ops
        keys = self._order if self._order is not None else sorted(ops)
        return ((key, ops[key]) for key in keys)

    def keys_in(self, lo: bytes, hi: Optional[bytes], reverse: bool = False) -> Iterator[bytes]:
        order = self._order
        if order is None:
            order = self._order = SortedList(self._ops)
        return order.irange(lo, hi, inclusive=(True, False), reverse=reverse)

    def holds_key_in(self, lo: bytes, hi: Optional[bytes]) -> bool:
        """Is a key of [lo, hi) written here? (a few writes are looked through without making
        their order)"""
        if self._order is None and len(self._ops) <= _FEW:
            return any(lo <= key and (hi is None or key < hi) for key in self._ops)
        for _ in self.keys_in(lo, hi):
            return True
        return False

    def clear(self) -> None:
        self._ops.clear()
        self._order = None

    def __len__(self) -> int:
        return len(self._ops)

    def __bool__(self) -> bool:
        return bool(self._ops)

    def overlay(self, base: Snapshot) -> OverlayTxn:
        """A read-write view: reads see this batch over `base`; writes go into this batch."""
        return OverlayTxn(base, self)


ABSENT = _ABSENT


class OverlayTxn(Txn):
    """A KeyBatch merged over a snapshot. `commit`/`abort` only end the view: the batch is the
    value that a real write transaction later applies."""

    def __init__(self, base: Snapshot, batch: KeyBatch) -> None:
        self.base = base
        self.batch = batch

    def get(self, key: bytes) -> Optional[bytes]:
        value = self.batch.lookup(key)
        if value is _ABSENT:
            return self.base.get(key)
        return value  # type: ignore[return-value]

    def put(self, key: bytes, value: bytes) -> None:
        self.batch.put(key, value)

    def put_many(self, pairs) -> None:
        self.batch.put_many(list(pairs))

    def delete(self, key: bytes) -> bool:
        existed = self.get(key) is not None
        self.batch.delete(key)
        return existed

    def first(self, lo: bytes, hi: Optional[bytes]) -> Optional[bytes]:
        """The base's own probe when the batch holds no key of [lo, hi) (a transaction's `_id`
        lookups, mostly); the merged scan otherwise."""
        if self.batch.holds_key_in(lo, hi):
            return super().first(lo, hi)
        return self.base.first(lo, hi)

    def scan(self, lo: bytes, hi: Optional[bytes], reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        batch = self.batch
        if not batch:
            yield from self.base.scan(lo, hi, reverse)
            return
        # Merge the base's pairs with the batch's keys; the batch wins on equal keys.
        own = ((k, 0, batch.lookup(k)) for k in list(batch.keys_in(lo, hi, reverse)))
        base = ((k, 1, v) for k, v in self.base.scan(lo, hi, reverse))
        last: Optional[bytes] = None
        merged = heapq.merge(own, base, key=(lambda t: (_Rev(t[0]), t[1])) if reverse else None)
        for key, _origin, value in merged:
            if key == last:
                continue  # the batch's entry for this key came first
            last = key
            if value is not None:
                yield key, value  # type: ignore[misc]  # batch values are bytes or None

    def commit(self) -> None:
        pass

    def abort(self) -> None:
        pass


class _Rev:
    """Reverse ordering of byte strings for heapq.merge of descending scans."""

    __slots__ = ("b",)

    def __init__(self, b: bytes) -> None:
        self.b = b

    def __lt__(self, other: _Rev) -> bool:
        return self.b > other.b

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Rev) and self.b == other.b
