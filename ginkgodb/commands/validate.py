"""validate: a collection's records checked against its indexes (engine/validate.py)."""
from __future__ import annotations

from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, Target, boolean, command, ignored, on_collection, unimplemented


@command("validate", help="Validate contents of a namespace by scanning its data structures for correctness.\n"
                          "This is a slow operation.\n\tAdd {full: true} option to do a more thorough check.",
         fields=(boolean("full"), boolean("background"), boolean("checkBSONConformance"),
                 boolean("enforceFastCount"),
                 ignored("scandata", "a legacy field pymongo sends: every record is always scanned"),
                 unimplemented("repair", "validate does not repair"),
                 unimplemented("metadata", "validate of the metadata alone")),
         target=Target.COLLECTION, privileges=(on_collection("validate"),))
def validate(ctx: CommandContext, args: Args) -> dict:
    """Every check runs whether or not `full` is given: the records are read and decoded once
    either way, on one snapshot."""
    assert args.coll is not None  # Target.COLLECTION
    if args.background and args.full:
        raise CommandError(ErrorCode.InvalidOptions, "Running the validate command with both { background: true }"
                                                     " and { full: true } is not supported.")
    if args.background and args.enforce_fast_count:
        raise CommandError(ErrorCode.InvalidOptions, "Running the validate command with both { background: true }"
                                                     " and { enforceFastCount: true } is not supported.")
    return ctx.engine.validate_collection(args.db, args.coll)
