"""validate: every record against every index, on one snapshot, as mongod's validate reports it.

Each record must decode as BSON; each index must hold exactly the entries its access method
computes from the records (missing and extra entries are listed, as mongod lists them); the
document count kept in the collection's numbers must equal the records counted; documents that
fail the collection's validator are counted as non-compliant (a warning, as mongod).
"""
from __future__ import annotations

from typing import Any

import bson

from ..bsonutil import keycodec
from ..storage.kv import prefix_end
from . import record_format
from .batch import read_numbers

_LISTED = 20   # entries listed per kind of inconsistency (mongod also caps the lists)


def validate_collection(coll: Any, reader: Any) -> dict:
    """The reply fields of validate for the collection handle `coll` over `reader`'s snapshot."""
    errors: list[str] = []
    warnings: list[str] = []
    corrupt: list = []
    expected: dict[str, set] = {ix.meta.name: set() for ix in coll.indexes if ix.kind != "clustered"}
    ids: dict = {}
    nrecords = invalid = non_compliant = 0
    validator = coll.validator
    for key, value in reader.scan(coll.record_prefix, prefix_end(coll.record_prefix)):
        nrecords += 1
        rid = coll.rid_of_record_key(key)
        try:
            doc = bson.decode(record_format.document(value))
        except Exception:   # noqa: BLE001 - any decoding failure is a corrupt record
            invalid += 1
            corrupt.append(_shown_rid(rid))
            continue
        ids[rid] = doc.get("_id")
        if validator is not None and not validator(doc):
            non_compliant += 1
        for ix in coll.indexes:
            if ix.meta.name in expected:
                keys, _ = ix.keys(doc)
                expected[ix.meta.name].update((k, rid) for k in keys)
    keys_per_index: dict[str, int] = {}
    details: dict[str, dict] = {}
    missing_list: list[dict] = []
    extra_list: list[dict] = []
    n_missing = n_extra = 0
    for ix in coll.indexes:
        name = ix.meta.name
        if name not in expected:   # the clustered index: its entries are the records
            keys_per_index[name] = nrecords
            details[name] = {"valid": True}
            continue
        actual = set()
        for entry, _ in reader.scan(ix.prefix, prefix_end(ix.prefix)):
            actual.add((ix.key_of_entry(entry), ix.rid_of_entry(entry)))
        keys_per_index[name] = len(actual)
        missing = expected[name] - actual
        building = ix.meta.options.get("textBuildState")   # a background text build (text_build.py)
        if building is not None:
            first, last = int(building["next"]), int(building["end"])
            missing = {(k, rid) for k, rid in missing if not first <= rid <= last}
            warnings.append(f"Index '{name}' is being built in the background: the records "
                            f"{first} to {last} are not indexed yet.")
        extra = actual - expected[name]
        details[name] = {"valid": not missing and not extra}
        n_missing += len(missing)
        n_extra += len(extra)
        for k, rid in sorted(missing, key=repr)[:_LISTED]:
            missing_list.append({"indexName": name, "recordId": _shown_rid(rid), "idKey": {"_id": ids.get(rid)},
                                 "indexKey": _index_key(ix, k)})
        for k, rid in sorted(extra, key=repr)[:_LISTED]:
            extra_list.append({"indexName": name, "recordId": _shown_rid(rid), "indexKey": _index_key(ix, k)})
        if missing or extra:
            errors.append(f"Index with name '{name}' has inconsistencies.")
    if n_missing:
        errors.append(f"Detected {n_missing} missing index entries.")
    if n_extra:
        errors.append(f"Detected {n_extra} extra index entries.")
    if invalid:
        errors.append("Detected one or more invalid documents. See logs.")
    counted = read_numbers(reader.txn, coll.meta.id).count
    if counted != nrecords:
        warnings.append(f"Collection {coll.ns} record count is incorrect: stored {counted}, found {nrecords}.")
    if non_compliant:
        warnings.append("Detected one or more documents in this collection not conformant to validation rules. "
                        "See logs.")
    return {"ns": coll.ns, "uuid": coll.meta.uuid, "nInvalidDocuments": invalid,
            "nNonCompliantDocuments": non_compliant, "nrecords": nrecords, "nIndexes": len(coll.indexes),
            "keysPerIndex": keys_per_index, "indexDetails": details, "valid": not errors, "repaired": False,
            "warnings": warnings, "errors": errors, "extraIndexEntries": extra_list,
            "missingIndexEntries": missing_list, "corruptRecords": corrupt}


def _shown_rid(rid: Any) -> Any:
    """A record id as the reply shows it: the number, or a clustered collection's `_id`."""
    if isinstance(rid, bytes):
        return keycodec.decode_key(rid, [1])[0]
    return rid


def _index_key(ix: Any, key: bytes) -> dict:
    try:
        values = keycodec.decode_key(key, ix.directions)
    except Exception:   # noqa: BLE001 - hashed/text/geo keys are not decodable to their values
        return {"": key.hex()}
    return {field: v for (field, _), v in zip(ix.pattern, values)}
