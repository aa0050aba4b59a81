"""Reads that never pin a snapshot between cursor batches.

A query holds one short read transaction per batch (`open`/`close`), or runs inside a writer's
transaction. Scans fetch growing chunks and resume after the last key, so a paused generator
survives its transaction being closed and a new one opened for the next batch.
"""
from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Optional

from ..storage.kv import KVEngine, Txn

_FIRST_CHUNK = 16
_MAX_CHUNK = 1024


class Reader:
    __slots__ = ("kv", "txn", "_fixed")

    def __init__(self, kv: KVEngine, txn: Optional[Txn] = None) -> None:
        self.kv = kv
        self.txn = txn
        self._fixed = txn is not None

    def open(self) -> None:
        if self.txn is None:
            self.txn = self.kv.begin()

    def close(self) -> None:
        if not self._fixed and self.txn is not None:
            self.txn.abort()
            self.txn = None

    def __enter__(self) -> "Reader":
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def get(self, key: bytes) -> Optional[bytes]:
        if self.txn is None:
            self.open()
        return self.txn.get(key)

    def first(self, lo: bytes, hi: Optional[bytes]) -> Optional[bytes]:
        if self.txn is None:
            self.open()
        return self.txn.first(lo, hi)

    def scan(self, lo: bytes, hi: Optional[bytes], reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        chunk = _FIRST_CHUNK
        while True:
            if self.txn is None:
                self.open()
            batch = list(islice(self.txn.scan(lo, hi, reverse), chunk))
            yield from batch
            if len(batch) < chunk:
                return
            last = batch[-1][0]
            if reverse:
                hi = last
            else:
                lo = last + b"\x00"
            chunk = min(chunk * 4, _MAX_CHUNK)
