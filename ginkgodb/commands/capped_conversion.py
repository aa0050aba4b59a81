"""cloneCollectionAsCapped and convertToCapped (the copy is the engine's: engine/capped_copy.py)."""
from __future__ import annotations

from typing import Any

from ..bsonutil.types import is_bson_number, type_name
from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, Target, command, on_collection, on_database, string, value


def _size(command_name: str, size: Any) -> float:
    if isinstance(size, bool) or not is_bson_number(size):
        raise CommandError(ErrorCode.TypeMismatch, f"BSON field '{command_name}.size' is the wrong type "
                                                   f"'{type_name(size)}', expected types "
                                                   "'[long, int, decimal, double]'")
    if size <= 0:
        raise CommandError(ErrorCode.BadValue, "size must be a positive number")
    return size


@command("cloneCollectionAsCapped",
         help="{ cloneCollectionAsCapped:<fromName>, toCollection:<toName>, size:<sizeInBytes> }",
         fields=(string("toCollection", required=True), value("size", required=True)),
         target=Target.COLLECTION, write=True, write_concern=True,
         privileges=(on_collection("find"), on_database("createCollection")))
def clone_collection_as_capped(ctx: CommandContext, args: Args) -> dict:
    assert args.coll is not None  # Target.COLLECTION
    if not args.to_collection:
        raise CommandError(ErrorCode.InvalidNamespace, "Invalid target collection name: empty")
    ctx.engine.clone_collection_as_capped(args.db, args.coll, args.to_collection,
                                          _size("cloneCollectionAsCapped", args.size))
    return {}


@command("convertToCapped", help="{ convertToCapped:<fromCollectionName>, size:<sizeInBytes> }",
         fields=(value("size", required=True),), target=Target.COLLECTION, write=True, write_concern=True,
         privileges=(on_collection("convertToCapped"),))
def convert_to_capped(ctx: CommandContext, args: Args) -> dict:
    assert args.coll is not None  # Target.COLLECTION
    ctx.engine.convert_to_capped(args.db, args.coll, _size("convertToCapped", args.size))
    return {}
