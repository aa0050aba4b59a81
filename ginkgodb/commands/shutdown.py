"""shutdown: stop the server cleanly, as mongod does on `db.shutdownServer()`.

Without authentication mongod accepts it only from localhost (13 Unauthorized otherwise). The
connection that asked is closed without a reply (mongod exits before answering), in-flight
operations get `timeoutSecs` to finish, then the data directory is flushed and closed. The
embedded client has no server to stop: it refuses the command (close the MongoClient instead).
"""
from __future__ import annotations

from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, boolean, command, integer, on_cluster

DEFAULT_TIMEOUT_SECS = 15  # mongod's default timeoutSecs
_LOCAL_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


def _is_local(address: str) -> bool:
    head, _, port = address.rpartition(":")
    host = (head if head and port.isdigit() else address).strip("[]")
    return host in _LOCAL_HOSTS or host.startswith("127.") or address.startswith("/")


@command("shutdown", help="Shutdown the database", admin_only=True, inline=True,
         fields=(boolean("force"), integer("timeoutSecs", DEFAULT_TIMEOUT_SECS, minimum=0)),
         privileges=(on_cluster("shutdown"),))
def shutdown(ctx: CommandContext, args: Args) -> dict:
    """`force` only matters to a replica-set primary (step down without a caught-up secondary);
    a standalone shuts down the same way with or without it."""
    if ctx.server is None:
        raise CommandError(ErrorCode.IllegalOperation,
                           "shutdown is not available in the embedded client: close the MongoClient "
                           "to release the data directory")
    security = getattr(ctx.server, "security", None)
    if not getattr(security, "enabled", False) and not _is_local(ctx.client_address or ""):
        raise CommandError(ErrorCode.Unauthorized, "shutdown must run from localhost when running db without auth")
    ctx.server.request_shutdown(float(args.timeout_secs))
    return {}
