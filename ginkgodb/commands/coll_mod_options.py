"""collMod's options beyond the ones `create` shares: the shape checks of `index.prepareUnique`
/ `index.unique` (the engine converts, engine/unique_conversion.py) and a clustered collection's
`expireAfterSeconds`."""
from __future__ import annotations

from typing import Any, Optional

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
