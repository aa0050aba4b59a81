"""explain: the plan (and optionally execution statistics) of another command, parsed by that
command's own declaration and explained by that command's own explain."""
from __future__ import annotations

from ..errors import CommandError, ErrorCode
from . import fields as P
from .context import CommandContext
from .declare import COMMANDS, OF_INNER_COMMAND, Args, command, string

_VERBOSITIES = ("queryPlanner", "executionStats", "allPlansExecution")


@command("explain", help="Describe how a command would run (and run it for executionStats).",
         fields=(string("verbosity", "allPlansExecution"),), privileges=(OF_INNER_COMMAND,))
def explain(ctx: CommandContext, args: Args) -> dict:
    inner = P.get_doc(args.cmd, "explain")
    if not inner:
        raise CommandError(ErrorCode.FailedToParse, "explain command requires a nested object")
    verbosity = args.verbosity
    if verbosity not in _VERBOSITIES:
        raise CommandError(ErrorCode.BadValue, "verbosity string must be one of {'queryPlanner', "
                                               "'executionStats', 'allPlansExecution'}")
    inner = dict(inner)
    inner["$db"] = args.db
    name = next(iter(inner))
    spec = COMMANDS.get(name)
    if spec is None or spec.explain is None:
        raise CommandError(ErrorCode.CommandNotFound, f"Explain failed due to unknown command: {name}")
    return spec.explain(ctx, spec.parse(inner, name), verbosity)
