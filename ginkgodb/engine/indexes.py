"""Index maintenance: keys of a document, uniqueness, entry writes.

An entry is `layout.index_prefix(id) + encoded key + record id` with an empty value, for unique and
non-unique indexes alike; uniqueness is checked by a prefix scan before anything is written, so a
document and all its index entries are written together or not at all.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Optional

from ..bsonutil import keycodec
from ..bsonutil.sentinels import ABSENT
from ..bsonutil.shell_format import format_document
from ..errors import CommandError, ErrorCode
from ..query.index_keys import extract_keys
from ..storage.kv import prefix_end
from . import layout
from .catalog import IndexMeta

MAX_INDEX_KEY = 480  # bytes of encoded key; LMDB keys are limited to 511 in all


class IndexRuntime:
    """Compiled view of one index: what keys a document has, and how they are stored."""

    __slots__ = ("meta", "prefix", "pattern", "directions", "_partial", "ns", "_simple_field", "_roots",
                 "collation")

    def __init__(self, meta: IndexMeta, ns: str) -> None:
        self.meta = meta
        self.ns = ns
        self.prefix = layout.index_prefix(meta.id)
        self.pattern = meta.pattern
        self.directions = [d if isinstance(d, (int, float)) else 1 for _, d in self.pattern]
        self._partial = None
        self.collation = meta.collation
        if meta.partial is not None:
            from ..query.match import compile_filter
            self._partial = compile_filter(meta.partial)
        # top-level fields the keys (and a partial filter) depend on
        roots = {f.split(".", 1)[0] for f, _ in self.pattern}
        if self._partial is not None:
            roots = None  # a partial filter may read anything
        self._roots = roots
        # `_id` and other single ascending top-level fields take a shortcut for scalar values
        field, direction = self.pattern[0]
        self._simple_field = field if (len(self.pattern) == 1 and direction == 1 and "." not in field
                                       and not meta.sparse and self.collation is None) else None

    def keys(self, doc: dict) -> tuple[list[bytes], set]:
        """Encoded keys of `doc` (empty when a partial/sparse index excludes it) and multikey paths."""
        if self._partial is not None and not self._partial(doc):
            return [], set()
        f = self._simple_field
        if f is not None:
            v = doc.get(f)
            if v is not None and not isinstance(v, (list, dict)):
                return [keycodec.encode_key((v,))], set()
        if self.collation is not None:
            doc = self.collation.transform(doc)  # strings are indexed by their collation keys
        return extract_keys(doc, self.pattern, sparse=self.meta.sparse)

    def unchanged(self, old: dict, new: dict) -> bool:
        """True when an update left every field this index reads as the very same object (the
        update engine copies only what it changes), so the keys cannot have changed."""
        roots = self._roots
        if roots is None:
            return False
        missing = ABSENT
        return all(old.get(r, missing) is new.get(r, missing) for r in roots)

    def check_unique(self, txn, keys: Iterable[bytes], rid: int, doc: dict) -> None:
        if not self.meta.unique:
            return
        own = layout.rid_bytes(rid)
        for key in keys:
            lo = self.prefix + key
            hi = prefix_end(lo)
            entry = txn.first(lo, hi)
            if entry is not None and entry[-layout.RID_WIDTH:] == own:
                entry = txn.first(entry + b"\x00", hi)  # our own entry: is there another?
            if entry is not None:
                raise self.duplicate_error(key, doc)

    def duplicate_error(self, key: bytes, doc: dict) -> CommandError:
        values = keycodec.decode_key(key, self.directions)
        key_value = {field: _original(doc, field, v) for (field, _), v in zip(self.pattern, values)}
        msg = (f"E11000 duplicate key error collection: {self.ns} index: {self.meta.name} "
               f"dup key: {format_document(key_value)}")
        return CommandError(ErrorCode.DuplicateKey, msg,
                            info={"keyPattern": dict(self.meta.key), "keyValue": key_value})

    def add(self, txn, keys: Iterable[bytes], rid: int) -> None:
        suffix = layout.rid_bytes(rid)
        for key in keys:
            if len(key) > MAX_INDEX_KEY:
                raise CommandError(ErrorCode.OBSOLETE_KeyTooLong,
                                   f"key too large to index, failing {len(key)} bytes "
                                   f"(limit {MAX_INDEX_KEY}) in index {self.meta.name}")
            txn.put(self.prefix + key + suffix, b"")

    def add_entries(self, txn, entries: list[bytes]) -> None:
        """Write whole entries (key + record id), sorted, as an index build does."""
        width = layout.RID_WIDTH
        for entry in entries:
            if len(entry) - width > MAX_INDEX_KEY:
                raise CommandError(ErrorCode.OBSOLETE_KeyTooLong,
                                   f"key too large to index, failing {len(entry) - width} bytes "
                                   f"(limit {MAX_INDEX_KEY}) in index {self.meta.name}")
        prefix = self.prefix
        txn.put_many((prefix + e, b"") for e in entries)

    def remove(self, txn, keys: Iterable[bytes], rid: int) -> None:
        suffix = layout.rid_bytes(rid)
        for key in keys:
            txn.delete(self.prefix + key + suffix)

    def entry_count(self, txn) -> int:
        return sum(1 for _ in txn.scan(self.prefix, prefix_end(self.prefix)))


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


# ---------------------------------------------------------------------------------------- specs
_SPECIAL_KINDS = {"hashed", "text", "2dsphere", "2d", "geoHaystack"}


def default_index_name(key: dict) -> str:
    return "_".join(f"{field}_{direction}" for field, direction in key.items())


def validate_key_pattern(key: Any) -> dict:
    if not isinstance(key, dict) or not key:
        raise CommandError(ErrorCode.CannotCreateIndex, "Index keys cannot be an empty field.")
    for field, direction in key.items():
        if not field:
            raise CommandError(ErrorCode.CannotCreateIndex, "Index keys cannot be an empty field.")
        if isinstance(direction, bool) or not (isinstance(direction, (int, float)) or direction in _SPECIAL_KINDS):
            if isinstance(direction, str):
                raise CommandError(ErrorCode.CannotCreateIndex, f"Unknown index plugin '{direction}'")
            raise CommandError(ErrorCode.CannotCreateIndex,
                               f"Values in index key pattern can't be of type {type(direction).__name__}")
        if isinstance(direction, (int, float)) and direction == 0:
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "Values in the index key pattern can't be 0 or -0")
        if field.startswith("$") and field != "$**" and not field.endswith("$**"):
            raise CommandError(ErrorCode.CannotCreateIndex,
                               f"Index key contains an illegal field name: field name starts with '$'.")
    kinds = [d for d in key.values() if isinstance(d, str)]
    if "hashed" in kinds and kinds.count("hashed") > 1:
        raise CommandError(ErrorCode.IndexMultipleHashedFields,
                           "A maximum of one index field is allowed to be hashed but found 2")
    return key


def normalize_spec(spec: Any) -> tuple[str, dict, dict]:
    """(name, key, options) from a createIndexes entry, with mongod's validation errors."""
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.TypeMismatch, "Index specification must be an object")
    if "key" not in spec:
        raise CommandError(ErrorCode.FailedToParse, "The 'key' field is a required property of an index specification")
    key = validate_key_pattern(spec["key"])
    name = spec.get("name")
    if name is None:
        raise CommandError(ErrorCode.FailedToParse, "The 'name' field is a required property of an index specification")
    if not isinstance(name, str) or not name:
        raise CommandError(ErrorCode.CannotCreateIndex, "The index name cannot be empty")
    options = {}
    for field, value in spec.items():
        if field in ("key", "name", "v", "ns"):
            continue
        if field not in _ALLOWED_OPTIONS:
            raise CommandError(ErrorCode.InvalidIndexSpecificationOption,
                               f"The field '{field}' is not valid for an index specification. Specification: "
                               f"{format_document(spec)}")
        options[field] = value
    if options.get("sparse") is False:
        options.pop("sparse")
    if options.get("unique") is False:
        options.pop("unique")
    _check_options(key, name, options)
    return name, dict(key), options


_ALLOWED_OPTIONS = {"unique", "sparse", "partialFilterExpression", "expireAfterSeconds", "hidden",
                    "collation", "weights", "default_language", "language_override", "textIndexVersion",
                    "2dsphereIndexVersion", "bits", "min", "max", "wildcardProjection", "storageEngine",
                    "background", "prepareUnique", "dropDups"}


def _check_options(key: dict, name: str, options: dict) -> None:
    if name == "_id_" or list(key) == ["_id"]:
        if options.get("sparse") or "partialFilterExpression" in options:
            raise CommandError(ErrorCode.InvalidIndexSpecificationOption,
                               "The field 'sparse' is not valid for an _id index specification.")
    if "partialFilterExpression" in options:
        pfe = options["partialFilterExpression"]
        if not isinstance(pfe, dict):
            raise CommandError(ErrorCode.TypeMismatch, "'partialFilterExpression' for an index must be a document")
        if options.get("sparse"):
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "cannot mix \"partialFilterExpression\" and \"sparse\" options")
        from ..query.match import compile_filter
        compile_filter(pfe)
    if "expireAfterSeconds" in options:
        ttl = options["expireAfterSeconds"]
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl < 0 or ttl > 2**31 - 1:
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "TTL index 'expireAfterSeconds' option must be within an acceptable range, "
                               "try a lower number")
        if len(key) > 1:
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "TTL indexes are single-field indexes, compound indexes do not support TTL.")
    if any(d == "hashed" for d in key.values()) and options.get("unique"):
        raise CommandError(ErrorCode.CannotCreateIndex,
                           "Currently hashed indexes cannot guarantee uniqueness. Use a regular index.")


def comparable_options(options: dict) -> dict:
    """Options that distinguish two indexes with the same key (mongod ignores the rest)."""
    return {k: v for k, v in options.items() if k in ("unique", "sparse", "partialFilterExpression",
                                                       "collation", "expireAfterSeconds", "hidden")}


def find_index(indexes: list[IndexMeta], spec: Any) -> Optional[IndexMeta]:
    """An index by name (str) or by key pattern (dict)."""
    for ix in indexes:
        if isinstance(spec, str) and ix.name == spec:
            return ix
        if isinstance(spec, dict) and list(ix.key.items()) == list(spec.items()):
            return ix
    return None
