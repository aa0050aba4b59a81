"""What hello says about the topology: a standalone, or a replica-set member's state; and the
awaitable hello's wait when no server loop waits for it (the embedded client)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .context import CommandContext
from .replica_set import member_of
from .topology import check_awaitable, topology_of


def topology_fields(ctx: CommandContext, cmd: Mapping[str, Any], legacy: bool) -> dict:
    """The first fields of hello (mongod's order): validates `topologyVersion`/`maxAwaitTimeMS`
    and, embedded, waits for a topology change as an awaitable hello does."""
    watch = topology_of(ctx.server)
    wait = check_awaitable(cmd, watch)
    if wait is not None and not getattr(ctx.server, "awaits_hello", False):
        watch.wait(watch.counter, wait)
    member = member_of(ctx)
    if member is not None:
        return member.hello_fields(legacy)
    return {"ismaster" if legacy else "isWritablePrimary": True, "topologyVersion": watch.version()}
