"""The command table: name -> handler. One module per command family registers into it.

A handler takes (ctx, cmd) where `cmd` is the command document (first key is the command name,
`$db` names the database) and returns the reply document without `ok` (dispatch adds it) or
raises CommandError.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Handler = Callable[[Any, Mapping[str, Any]], dict]


@dataclass(frozen=True)
class CommandSpec:
    name: str
    handler: Handler
    help: str
    admin_only: bool = False       # must run against the admin database
    write: bool = False            # counts as a write for opcounters/locking
    aliases: tuple[str, ...] = field(default=())


COMMANDS: dict[str, CommandSpec] = {}


def command(name: str, *aliases: str, help: str, admin_only: bool = False,
            write: bool = False) -> Callable[[Handler], Handler]:
    """Register a handler under `name` and its exact-case aliases (e.g. 'ismaster')."""
    def register(fn: Handler) -> Handler:
        spec = CommandSpec(name, fn, help, admin_only, write, aliases)
        for key in (name, *aliases):
            assert key not in COMMANDS, f"command {key} registered twice"
            COMMANDS[key] = spec
        return fn
    return register
