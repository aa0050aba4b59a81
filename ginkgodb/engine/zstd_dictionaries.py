"""Trained zstd dictionaries for zstd collections of small documents.

zstd compresses a 0.5 KB document alone to about 70% of its size and spends most of its time
setting up; with a 16 KB dictionary trained on the collection's own documents, the same document
takes about 28% and decompresses twice as fast (bench/results/compression.md). So once a zstd
collection holds `TRAIN_AT` documents averaging under `SMALL_DOCUMENT` bytes, the write batch that
inserts the `TRAIN_AT`-th trains a dictionary on its newest documents, stores it under its id
(layout.zstd_dictionary_key) and records the id in the catalog entry; records written from then
on are codec-4 envelopes naming it (docs/design/storage-layout.md). Records written before stay as
they are: every envelope says how to read itself. Training that finds nothing to learn is tried
again `TRAIN_AT` documents later. A dictionary is local storage, like a page layout: the oplog
does not log it, and each member of a replica set trains its own.
"""
from __future__ import annotations

from typing import Any

from ..storage.kv import prefix_end
from . import layout, record_format
from .collection import Collection

#: documents a collection holds before (and between attempts at) training
TRAIN_AT = 1000
#: the average document size below which a dictionary pays (large documents compress alone)
SMALL_DOCUMENT = 16 * 1024
#: the newest documents a dictionary is trained on
SAMPLES = 1000


def load_dictionaries(snap: Any) -> None:
    """Register every dictionary stored in `snap` (with a catalog being loaded), so that every
    record a reader of that catalog can see is readable. All of them, not only those the entries
    name: a record keeps the dictionary it was written with whatever its entry says later."""
    prefix = layout.META_ZSTD_DICT
    for key, data in snap.scan(prefix, prefix_end(prefix)):
        if not record_format.has_dictionary(layout.zstd_dictionary_of_key(key)):
            record_format.register_dictionary(bytes(data))


def after_insert(batch: Any, coll: Collection) -> None:
    """Train the collection's dictionary when it is due (called for zstd collections without one)."""
    if batch.in_transaction:  # a transaction's numbers are its own deltas; its commit trains none
        return
    numbers = batch.numbers(coll.meta.id)
    if numbers.count < TRAIN_AT or numbers.count % TRAIN_AT or numbers.size > SMALL_DOCUMENT * numbers.count:
        return
    current = batch.collection(coll.meta.db, coll.meta.name)
    if current is None or current.meta.dictionary:
        return
    samples = []
    prefix = coll.record_prefix
    for _, value in batch.txn.scan(prefix, prefix_end(prefix), True):
        samples.append(record_format.document(value))
        if len(samples) >= SAMPLES:
            break
    data = record_format.train_dictionary(samples)
    if data is None:
        return
    did = record_format.register_dictionary(data)
    batch.txn.put(layout.zstd_dictionary_key(did), data)
    batch.save_meta(current.meta.evolve(dictionary=did), "dictionary")
