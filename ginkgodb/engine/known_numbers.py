"""The per-collection numbers (next record id, count, size) as this engine's last commit left them.

Every write batch reads the numbers of the collections it writes (batch.py) and stores them again
at its commit; an insert_one reads two (its collection's and the oplog's). Kept here after each
commit, the next batch starts from them instead of reading storage, as long as nothing else
committed in between: always true when the storage is not shared; when other processes share it,
the writer's `base_version` must be the one this engine's last commit produced, and a commit whose
version is not known (it wrote no numbers, so it may have written nothing) forgets them all. Only
memory: the numbers in storage stay the truth (a restart or another process reads them there).
The same test tells the engine that the catalog it published is the writer's (no generation read).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from .batch import CollectionNumbers


class KnownNumbers:
    """Owned by the engine and used under its write lock. It keeps the committed batches'
    CollectionNumbers objects themselves (a finished batch never touches them again); a batch
    copies the ones it moves (WriteBatch.numbers)."""

    __slots__ = ("_shared", "_numbers", "_version", "_lost")

    def __init__(self, shared: bool) -> None:
        self._shared = shared
        self._numbers: dict[int, CollectionNumbers] = {}
        self._version: Optional[int] = None     # the base_version they hold for (shared storage)
        self._lost = False                      # a commit failed: storage's state is not known

    def begin(self, batch: Any) -> bool:
        """Give a new batch the numbers it may start from; True when nothing committed since
        this engine's last commit (so the catalog it published is also storage's), False when
        the batch must read them, and the catalog generation, from storage."""
        if self._shared:
            base = batch._base_version = batch.txn.base_version()
            if base is None or base != self._version:
                return False
        elif self._lost:
            return False
        batch._known = self._numbers
        return True

    def committed(self, batch: Any) -> None:
        """After `batch` committed: keep its numbers."""
        numbers = batch._numbers
        known = self._numbers if batch._known is not None else {}
        known.update(numbers)
        if batch._forgotten:
            for coll_id in batch._forgotten:
                known.pop(coll_id, None)
        self._numbers = known
        self._lost = False
        if self._shared:
            base_version = batch._base_version
            wrote = False
            for n in numbers.values():   # a loop, not any(): no generator per commit
                if n.dirty:
                    wrote = True
                    break
            self._version = base_version + 1 if wrote and base_version is not None else None

    def forget(self) -> None:
        """A commit failed, perhaps after storage committed it: the next batch reads storage."""
        self._numbers = {}
        self._version = None
        self._lost = True
