"""collMod's `prepareUnique` and `unique: true` on an existing index, as mongod 7.0.

`prepareUnique: true` makes the index refuse new duplicate keys (access/entries.py checks it as
it checks `unique`); `unique: true` then converts it, after checking the stored entries: any key
held by more than one document fails with CannotConvertIndexToUnique and lists the `_id`s of
each such group (`violations: [{ids: [...]}, ...]`), changing nothing.
"""
from __future__ import annotations

from typing import Any, Optional

import bson

from ..errors import CommandError, ErrorCode
from ..storage.kv import prefix_end
from . import record_format
from .catalog_entries import CollectionMeta
from .index_specs import find_index


def apply_unique_options(batch: Any, meta: CollectionMeta, indexes: Optional[list], target: Any,
                         options: dict) -> tuple[list, dict, dict]:
    """(the new index list, the reply's fields, the logged new options) for `prepareUnique` and
    `unique` in collMod's `index`; raises 359 with the violations when duplicates exist."""
    indexes = list(indexes if indexes is not None else meta.indexes)
    ix = find_index(indexes, target)
    if ix is None:
        raise CommandError(ErrorCode.IndexNotFound, f"cannot find index {target} for ns {meta.ns}")
    changed = dict(ix.options)
    reply: dict = {}
    if "prepareUnique" in options:
        old = bool(ix.options.get("prepareUnique"))
        if old != options["prepareUnique"]:
            reply["prepareUnique_old"], reply["prepareUnique_new"] = old, options["prepareUnique"]
        if options["prepareUnique"]:
            changed["prepareUnique"] = True
        else:
            changed.pop("prepareUnique", None)
    if options.get("unique") and not ix.unique:
        if not changed.get("prepareUnique"):
            raise CommandError(ErrorCode.InvalidOptions,
                               "Cannot make index unique with 'prepareUnique=false'. Run 'collMod' to set it first.")
        violations = _violations(batch, meta, ix)
        if violations:
            raise CommandError(ErrorCode.CannotConvertIndexToUnique,
                               "Cannot convert the index to unique. Please resolve conflicting documents before "
                               "running collMod again.", info={"violations": violations})
        changed["unique"] = True
        changed.pop("prepareUnique", None)
        reply["unique_new"] = True
    new = ix.evolve(options=changed)
    logged = {k: options[k] for k in ("prepareUnique", "unique") if k in options}
    return [new if i is ix else i for i in indexes], reply, logged


def _violations(batch: Any, meta: CollectionMeta, ix: Any) -> list[dict]:
    """`[{ids: [...]}]`, one per key that more than one document holds, in key order."""
    coll = batch.collection(meta.db, meta.name)
    runtime = coll.index(ix.name)
    txn = batch.txn
    groups: list[dict] = []
    last_key: Optional[bytes] = None
    rids: list = []

    def close() -> None:
        if len(rids) > 1:
            ids = []
            for rid in rids:
                value = txn.get(coll.record_key(rid))
                if value is not None:
                    ids.append(bson.decode(record_format.document(value))["_id"])
            groups.append({"ids": ids})

    for entry, _ in txn.scan(runtime.prefix, prefix_end(runtime.prefix)):
        key = runtime.key_of_entry(entry)
        if key != last_key:
            close()
            last_key, rids = key, []
        rids.append(runtime.rid_of_entry(entry))
    close()
    return groups
