"""Test-only commands (mongod's `--setParameter enableTestCommands=1`): configureFailPoint.

With test commands off (the default) they do not exist: 59 CommandNotFound, as on mongod.
"""
from __future__ import annotations

from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, command, on_cluster, value
from .fail_points import FAIL_POINTS


@command("configureFailPoint", help="modifies the settings of a fail point", admin_only=True, inline=True,
         test_only=True, privileges=(on_cluster("enableTestCommands"),),
         fields=(value("mode"), value("data")))
def configure_fail_point(ctx: CommandContext, args: Args) -> dict:
    if args.mode is None:
        raise CommandError(ErrorCode.IDLFailedToParse,
                           "BSON field 'configureFailPoint.mode' is missing but a required field")
    if not isinstance(args.value, str):
        raise CommandError(ErrorCode.TypeMismatch, "configureFailPoint must be a string")
    return {"count": FAIL_POINTS.configure(args.value, args.mode, args.data)}
