"""hello / isMaster / ismaster: what a MongoDB 7.0 standalone or replica-set member answers.

The topology fields (`topologyVersion`, and a member's setName, hosts, primary, ...) come from
hello_topology.py; the awaitable hello's wait is the server's (docs/design/wire.md).
"""
from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from ..errors import CommandError, ErrorCode
from ..limits import MAX_BSON_OBJECT_SIZE, MAX_MESSAGE_SIZE, MAX_WRITE_BATCH_SIZE
from .auth_sasl import handshake_fields
from .context import CommandContext
from .declare import Args, command
from .hello_topology import topology_fields
from .server_view import LOGICAL_SESSION_TIMEOUT_MINUTES

MIN_WIRE_VERSION = 0
MAX_WIRE_VERSION = 21  # MongoDB 7.0

_LB_MISMATCH = ("The server is being accessed through a load balancer, but this server does not "
                "have load balancing enabled")


@command("hello", help="Check if this server is primary for a replica set\n"
                       "{ hello : 1 }",
         open_fields="hello takes drivers' handshake fields; mongod ignores unknown ones", inline=True,
         requires_auth=False, api_version_1=True)
def hello(ctx: CommandContext, args: Args) -> dict:
    cmd = args.cmd
    return handshake_reply(ctx, cmd, topology_fields(ctx, cmd, legacy=False))


@command("isMaster", "ismaster", help="Check if this server is primary for a replica set\n"
                                      "{ isMaster : 1 }",
         open_fields="hello takes drivers' handshake fields; mongod ignores unknown ones", inline=True,
         requires_auth=False)
def is_master(ctx: CommandContext, args: Args) -> dict:
    cmd = args.cmd
    return handshake_reply(ctx, cmd, topology_fields(ctx, cmd, legacy=True))


def handshake_reply(ctx: CommandContext, cmd: Mapping[str, Any], reply: dict) -> dict:
    """The standalone hello reply, with `helloOk` and `compression` echoed as mongod does."""
    if cmd.get("loadBalanced"):
        raise CommandError(ErrorCode.LoadBalancerSupportMismatch, _LB_MISMATCH)
    client = cmd.get("client")
    if client is not None:
        if ctx.client_metadata is not None:
            raise CommandError(ErrorCode.ClientMetadataCannotBeMutated,
                               "The client metadata document may only be sent in the first hello")
        if not isinstance(client, Mapping):
            raise CommandError(ErrorCode.TypeMismatch, "'client' field is not a document")
    if cmd.get("helloOk") is not None:
        reply["helloOk"] = True
    reply.update({
        "maxBsonObjectSize": MAX_BSON_OBJECT_SIZE,
        "maxMessageSizeBytes": MAX_MESSAGE_SIZE,
        "maxWriteBatchSize": MAX_WRITE_BATCH_SIZE,
        "localTime": datetime.datetime.now(datetime.UTC),
        "logicalSessionTimeoutMinutes": LOGICAL_SESSION_TIMEOUT_MINUTES,
        "connectionId": ctx.connection_id,
        "minWireVersion": MIN_WIRE_VERSION,
        "maxWireVersion": MAX_WIRE_VERSION,
        "readOnly": False,
    })
    requested = cmd.get("compression")
    if isinstance(requested, list):
        supported = set(getattr(ctx.server, "compressors", ()) or ())
        reply["compression"] = [n for n in requested if isinstance(n, str) and n in supported]
    handshake_fields(ctx, cmd, reply)
    return reply
