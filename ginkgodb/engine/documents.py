"""Turning user documents into stored BSON, with mongod's rules for `_id` and size."""
from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from itertools import chain, compress
from operator import is_not
from typing import Any

import bson
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument
from bson.regex import Regex
from bson.timestamp import Timestamp

from ..bsonutil.types import Undefined
from ..errors import CommandError, ErrorCode
from ..limits import MAX_BSON_OBJECT_SIZE

#: nesting levels a stored document may have (mongod's BSONDepth::getMaxDepthForUserStorage)
MAX_USER_DEPTH = 100
#: no BSON shorter than this can nest MAX_USER_DEPTH containers (7 bytes per level at least)
SHALLOW_BELOW = 5 + 7 * MAX_USER_DEPTH


def _too_deep(doc: Mapping, *, for_update: bool) -> bool:
    """mongod's two rules, counting the document itself as level 1: an insert refuses an object
    or array element at level 100 (descending into it would pass the limit); an update's storage
    validation refuses any element at level 101 (so an empty object there still passes)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    scalars = _SCALARS
    while stack:
        container, level = stack.pop()
        values = container.values() if type(container) is dict or isinstance(container, Mapping) else container
        if for_update and level > MAX_USER_DEPTH:
            if values:
                return True
            continue
        too_deep = not for_update and level >= MAX_USER_DEPTH
        for value in values:
            t = type(value)
            if t is dict or t is list or (t not in scalars and isinstance(value, (Mapping, list))):
                if too_deep:
                    return True
                stack.append((value, level + 1))
    return False


def _changes_too_deep(new: Mapping, old: Mapping) -> bool:
    """_too_deep's update rule over what an update changed: a value that is the very object the
    stored document `old` held at the same path is skipped, with all it contains. It passed the
    rule, at that depth, when it was stored, and the update engine copies what it changes and
    never changes `old` (index maintenance compares both). A bucket document's `$push` so walks
    the top level, the array and the new element, not every element of the array; the
    identity tests run in C (map, compress)."""
    stack: list[tuple[Any, Any, int]] = [(new, old, 1)]
    scalars = _SCALARS
    while stack:
        container, before, level = stack.pop()
        if level > MAX_USER_DEPTH:
            if container:
                return True
            continue
        if type(container) is dict or isinstance(container, Mapping):
            get = before.get if type(before) is dict or isinstance(before, Mapping) else None
            pairs: Any = container.items()
            if get is not None:
                pairs = compress(pairs, map(is_not, container.values(), map(get, container)))
            for key, value in pairs:
                t = type(value)
                if t is dict or t is list or (t not in scalars and isinstance(value, (Mapping, list))):
                    stack.append((value, get(key) if get is not None else None, level + 1))
            continue
        if type(before) is list:   # elements other than the same objects at the same positions
            changed: Any = chain(compress(container, map(is_not, container, before)), container[len(before):])
        else:
            changed = container
        for value in changed:
            t = type(value)
            if t is dict or t is list or (t not in scalars and isinstance(value, (Mapping, list))):
                stack.append((value, None, level + 1))
    return False


#: value types that are never containers: the walk above skips them without the Mapping test
#: (an ABC check, slow for every scalar of a large document)
_SCALARS = frozenset((int, float, str, bool, bytes, type(None), ObjectId, datetime.datetime, Int64,
                      Timestamp, Regex, Decimal128))


def check_depth(doc: Mapping, raw_size: int, *, for_update: bool = False, old: Any = None) -> None:
    """Overflow (15) with mongod's message for a document nested deeper than 100 levels. `old`:
    the stored document an update made `doc` from (only what changed is walked)."""
    if raw_size < SHALLOW_BELOW:
        return
    if not (_changes_too_deep(doc, old) if old is not None else _too_deep(doc, for_update=for_update)):
        return
    if for_update:
        raise CommandError(ErrorCode.Overflow, f"Document exceeds maximum nesting depth of {MAX_USER_DEPTH}")
    raise CommandError(ErrorCode.Overflow,
                       f"cannot insert document because it exceeds {MAX_USER_DEPTH} levels of nesting")


def as_dict(doc: Any) -> dict:
    """A decoded dict for any document-like input (RawBSONDocument decodes once)."""
    if type(doc) is dict:
        return doc
    if isinstance(doc, RawBSONDocument):
        return bson.decode(doc.raw)
    return dict(doc)


_PLAIN_ID_TYPES = frozenset((ObjectId, int, str, float))


def check_id(value: Any) -> None:
    if type(value) in _PLAIN_ID_TYPES:    # the commonest _ids need no check
        return
    if isinstance(value, list):
        raise CommandError(ErrorCode.InvalidIdField, "The '_id' value cannot be of type array")
    if isinstance(value, (Regex, re.Pattern)):
        raise CommandError(ErrorCode.InvalidIdField, "can't use a regex for _id")
    if isinstance(value, Undefined):
        raise CommandError(ErrorCode.InvalidIdField, "can't use a undefined for _id")
    if isinstance(value, Mapping):
        _check_no_dollar(value)


def _check_no_dollar(value: Mapping) -> None:
    for key, sub in value.items():
        if key.startswith("$"):
            raise CommandError(ErrorCode.DollarPrefixedFieldName,
                               f"_id fields may not contain '$'-prefixed fields: {key} is not valid for storage.")
        if isinstance(sub, Mapping):
            _check_no_dollar(sub)


def prepare_insert(doc: Any, *, upsert: bool = False, now: Any = None) -> tuple[dict, bytes]:
    """(decoded document with `_id` first, its BSON) ready to store; raises CommandError. An
    upsert's document is checked as an update's result (mongod validates it that way). `now`
    (an insert's clock): a top-level Timestamp(0, 0) becomes the current timestamp, as mongod."""
    if isinstance(doc, RawBSONDocument):
        raw = bytes(doc.raw)
        d = bson.decode(raw)
        if now is not None and Timestamp in map(type, d.values()) and _empty_timestamps(d):
            doc = _filled(d, now)  # re-encoded below
        elif d and next(iter(d)) == "_id":
            value = d["_id"]
            if type(value) not in _PLAIN_ID_TYPES:   # check_id's own shortcut, without its call
                check_id(value)
            size = len(raw)
            if size > MAX_BSON_OBJECT_SIZE or size >= SHALLOW_BELOW:   # else neither check can fail
                check_size(size)
                check_depth(d, size, for_update=upsert)
            return d, raw
    if not isinstance(doc, RawBSONDocument):
        d = doc if type(doc) is dict else dict(doc)
        if now is not None and _empty_timestamps(d):
            d = _filled(d, now)  # a copy: the caller's document is left as it was
    if "_id" in d:
        check_id(d["_id"])
        if next(iter(d)) != "_id":
            d = {"_id": d["_id"], **{k: v for k, v in d.items() if k != "_id"}}
    else:
        d = {"_id": ObjectId(), **d}
    raw = bson.encode(d)
    check_size(len(raw))
    check_depth(d, len(raw), for_update=upsert)
    return d, raw


def _empty_timestamp(name: str, value: Any) -> bool:
    """A top-level field mongod fills in on insert: Timestamp(0, 0), except in `_id`."""
    return type(value) is Timestamp and value.time == 0 and value.inc == 0 and name != "_id"


def _empty_timestamps(d: Mapping) -> bool:
    if Timestamp not in map(type, d.values()):    # one pass in C: the common case
        return False
    return any(_empty_timestamp(k, v) for k, v in d.items())


def _filled(d: Mapping, now: Any) -> dict:
    """`d` with its top-level empty timestamps replaced by `now()`."""
    return {k: now() if _empty_timestamp(k, v) else v for k, v in d.items()}


def check_size(size: int) -> None:
    if size > MAX_BSON_OBJECT_SIZE:
        raise CommandError(ErrorCode.BSONObjectTooLarge,
                           f"object to insert too large. size in bytes: {size}, max size: {MAX_BSON_OBJECT_SIZE}")


def encode_updated(doc: dict, old: Any = None) -> bytes:
    """`doc`'s BSON, checked as an update's result; `old`: the stored document it was made from."""
    raw = bson.encode(doc)
    if len(raw) > MAX_BSON_OBJECT_SIZE:
        raise CommandError(ErrorCode.UpdatedDocumentTooLarge,
                           f"Resulting document after update is larger than {MAX_BSON_OBJECT_SIZE}")
    check_depth(doc, len(raw), for_update=True, old=old)
    return raw
