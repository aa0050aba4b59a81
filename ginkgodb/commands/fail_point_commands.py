"""Test-only commands (mongod's `--setParameter enableTestCommands=1`): configureFailPoint.

With test commands off (the default) they do not exist: 59 CommandNotFound, as on mongod.
"""
from __future__ import annotations

from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, command, on_cluster, value
from .fail_points import FAIL_POINTS
from .server_parameters import PARAMETERS


def test_commands_enabled() -> bool:
    return bool(PARAMETERS.value("enableTestCommands"))


def _require_test_commands(name: str) -> None:
    if not test_commands_enabled():
        raise CommandError(ErrorCode.CommandNotFound, f"no such command: '{name}'")


@command("configureFailPoint", help="modifies the settings of a fail point", admin_only=True, inline=True,
         privileges=(on_cluster("enableTestCommands"),),
         fields=(value("mode"), value("data")))
def configure_fail_point(ctx: CommandContext, args: Args) -> dict:
    _require_test_commands("configureFailPoint")
    if args.mode is None:
        raise CommandError(ErrorCode.IDLFailedToParse,
                           "BSON field 'configureFailPoint.mode' is missing but a required field")
    if not isinstance(args.value, str):
        raise CommandError(ErrorCode.TypeMismatch, "configureFailPoint must be a string")
    return {"count": FAIL_POINTS.configure(args.value, args.mode, args.data)}
