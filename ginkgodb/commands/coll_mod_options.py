"""collMod's options beyond the ones `create` shares: the shape checks of `index.prepareUnique`
/ `index.unique` (the engine converts, engine/unique_conversion.py) and a clustered collection's
`expireAfterSeconds`."""
from __future__ import annotations

from ..errors import CommandError, ErrorCode


def check_unique_request(options: dict) -> None:
    """The shape of the request, before anything is read."""
    if "unique" in options and options["unique"] is not True:
        raise CommandError(ErrorCode.BadValue, "collMod does not support converting an index to 'unique: false'")
    if "prepareUnique" in options and not isinstance(options["prepareUnique"], bool):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field 'collMod.index.prepareUnique' is the wrong type, "
                                                   "expected type 'bool'")
