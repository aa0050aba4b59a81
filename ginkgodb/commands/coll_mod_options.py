"""collMod's options beyond the ones `create` shares: the shape checks of `index.prepareUnique`
/ `index.unique` (the engine converts, engine/unique_conversion.py) and a clustered collection's
`expireAfterSeconds`."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from ..bsonutil.types import is_bson_number, type_name
from ..errors import CommandError, ErrorCode
from .clustered_options import check_expire_after_seconds


def check_unique_request(options: dict) -> None:
    """The shape of the request, before anything is read."""
    if "unique" in options and options["unique"] is not True:
        raise CommandError(ErrorCode.BadValue, "collMod does not support converting an index to 'unique: false'")
    if "prepareUnique" in options and not isinstance(options["prepareUnique"], bool):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field 'collMod.index.prepareUnique' is the wrong type, "
                                                   "expected type 'bool'")


def clustered_ttl(options: dict, value: Any) -> Optional[float]:
    """collMod's `expireAfterSeconds` for the collection whose options are `options`: the new
    TTL, or None for "off" (no TTL)."""
    if "timeseries" in options:
        raise CommandError(ErrorCode.NotImplemented, "collMod of a time-series collection's expireAfterSeconds "
                                                     "is not supported by ginkgodb yet")
    if "clusteredIndex" not in options:
        raise CommandError(ErrorCode.InvalidOptions,
                           "'expireAfterSeconds' option is only supported on collections clustered by _id")
    if isinstance(value, str):
        if value != "off":
            raise CommandError(ErrorCode.InvalidOptions,
                               f"Invalid string value for the 'clusteredIndex::expireAfterSeconds' option. "
                               f"Got: '{value}'. Accepted value is 'off'")
        return None
    check_expire_after_seconds(value, "collMod.expireAfterSeconds")
    return value


MAX_CAPPED_SIZE = 2**50        # 1 PB, mongod's limit
MAX_CAPPED_DOCS = 2**31


def capped_changes(options: Mapping, cmd: Mapping) -> dict:
    """collMod's `cappedSize`/`cappedMax` for a capped collection, as its `size`/`max` options
    (a smaller limit evicts the oldest documents at the next insert, as mongod)."""
    changes: dict = {}
    if "cappedSize" not in cmd and "cappedMax" not in cmd:
        return changes
    for field, low, high in (("cappedSize", 1, MAX_CAPPED_SIZE), ("cappedMax", None, MAX_CAPPED_DOCS - 1)):
        if field not in cmd:
            continue
        value = cmd[field]
        if isinstance(value, bool) or not is_bson_number(value):
            raise CommandError(ErrorCode.TypeMismatch, f"BSON field 'collMod.{field}' is the wrong type "
                                                       f"'{type_name(value)}', expected types "
                                                       "'[long, int, decimal, double]'")
        if low is not None and value < low:
            raise CommandError(ErrorCode.BadValue, f"BSON field '{field}' value must be >= {low}, "
                                                   f"actual value '{int(value)}'")
        if value > high:
            raise CommandError(ErrorCode.BadValue, f"BSON field '{field}' value must be <= {high}, "
                                                   f"actual value '{int(value)}'")
        changes["size" if field == "cappedSize" else "max"] = int(value)
    if not options.get("capped"):
        raise CommandError(ErrorCode.InvalidOptions, "Collection must be capped.")
    return changes
