"""Connections to the shards: one pymongo client per shard, versioned requests, shard cursors.

pymongo does the wire work (pooling, OP_MSG, server selection and failover inside a replica-set
shard). A shard's host string is mongos' form: `rs/host:port,host:port` for a replica set,
`host:port` for a single server.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any, Optional

import pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo.errors import ConnectionFailure, OperationFailure, PyMongoError

from ..errors import CommandError, ErrorCode

RAW = CodecOptions(document_class=RawBSONDocument, tz_aware=False)
PLAIN: CodecOptions = CodecOptions(document_class=dict, tz_aware=False)
STALE_CONFIG = int(ErrorCode.StaleConfig)
SET_VERSION = "_ginkgoSetShardVersion"
GETMORE_BYTES = 4 * 1024 * 1024


def connection_uri(host: str) -> str:
    name, sep, members = host.partition("/")
    if sep:
        return f"mongodb://{members}/?replicaSet={name}"
    return f"mongodb://{host}/?directConnection=true"


def version_field(epoch: Any, timestamp: Any, version: tuple[int, int]) -> dict:
    """The `shardVersion` a versioned request carries (7.0's {e, t, v} shape)."""
    from bson.timestamp import Timestamp
    return {"e": epoch, "t": timestamp, "v": Timestamp(version[0], version[1])}


class ShardReplyError(Exception):
    """A shard's error reply, to hand back to the client as it is (code, codeName, errmsg)."""

    def __init__(self, reply: Mapping) -> None:
        super().__init__(reply.get("errmsg", "shard error"))
        self.reply = dict(reply)


class StaleConfig(Exception):
    """A shard answered 13388: the router's chunk map is older than the shard's, or the shard
    does not know the collection's version (`unknown`: it restarted, or was added later)."""

    def __init__(self, reply: Mapping, shard: str = "") -> None:
        super().__init__(reply.get("errmsg", "StaleConfig"))
        self.reply = reply
        self.shard = shard


class Shards:
    """The router's clients, by shard name (created on first use)."""

    def __init__(self) -> None:
        self._clients: dict[str, pymongo.MongoClient] = {}
        self._hosts: dict[str, str] = {}
        self._lock = threading.Lock()

    def register(self, name: str, host: str) -> None:
        with self._lock:
            if self._hosts.get(name) != host:
                old = self._clients.pop(name, None)
                if old is not None:
                    old.close()
                self._hosts[name] = host

    def unregister(self, name: str) -> None:
        with self._lock:
            self._hosts.pop(name, None)
            old = self._clients.pop(name, None)
        if old is not None:
            old.close()

    def known(self) -> list[str]:
        return sorted(self._hosts)

    def client(self, name: str) -> pymongo.MongoClient:
        with self._lock:
            client = self._clients.get(name)
            if client is None:
                host = self._hosts.get(name)
                if host is None:
                    raise CommandError(ErrorCode.ShardNotFound, f"Shard {name} not found")
                client = pymongo.MongoClient(connection_uri(host), serverSelectionTimeoutMS=10000,
                                             retryWrites=False, retryReads=False, maxPoolSize=32)
                self._clients[name] = client
            return client

    def command(self, shard: str, db: str, cmd: Mapping, *, raw: bool = False, stale_check: bool = True) -> Any:
        """Run `cmd` on the shard's primary; the reply (an error reply as a document, not an
        exception). Raises StaleConfig on 13388 when `stale_check`; HostUnreachable when the
        shard cannot be reached."""
        try:
            reply = self.client(shard)[db].command(dict(cmd), codec_options=RAW if raw else PLAIN)
        except OperationFailure as exc:
            reply = dict(exc.details or {"ok": 0.0, "errmsg": str(exc), "code": exc.code})
        except ConnectionFailure as exc:
            raise CommandError(ErrorCode.HostUnreachable, f"shard {shard} unreachable: {exc}") from exc
        except PyMongoError as exc:
            raise CommandError(ErrorCode.OperationFailed, f"shard {shard}: {exc}") from exc
        if stale_check and reply.get("code") == STALE_CONFIG:
            raise StaleConfig(dict(reply), shard)
        return reply

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()


class ShardCursor:
    """One shard's part of a routed query: its first batch, then getMores as the merge pulls."""

    def __init__(self, shards: Shards, shard: str, db: str, coll: str, reply: Mapping,
                 batch_size: int = 0) -> None:
        self.shards, self.shard, self.db, self.coll = shards, shard, db, coll
        cursor = reply["cursor"]
        self.id = int(cursor["id"])
        self.batch: list[Any] = list(cursor["firstBatch"])
        self.batch_size = batch_size
        self.plan: Optional[Any] = None

    def __iter__(self) -> Iterator[Any]:
        while True:
            sizes = [len(d.raw) for d in self.batch if isinstance(d, RawBSONDocument)]
            yield from self.batch
            self.batch = []
            if not self.id:
                return
            cmd: dict[str, Any] = {"getMore": self.id, "collection": self.coll}
            # a batch the size of the documents seen so far allows, well under the 16 MB reply
            fit = max(1, GETMORE_BYTES // max(1, sum(sizes) // len(sizes))) if sizes else 1000
            cmd["batchSize"] = min(self.batch_size, fit) if self.batch_size else fit
            reply = self.shards.command(self.shard, self.db, cmd, raw=True, stale_check=False)
            if reply.get("ok") != 1.0:
                self.id = 0
                raise ShardReplyError(reply)
            self.id = int(reply["cursor"]["id"])
            self.batch = list(reply["cursor"]["nextBatch"])

    def kill(self) -> None:
        if self.id:
            try:
                self.shards.command(self.shard, self.db, {"killCursors": self.coll, "cursors": [self.id]},
                                    stale_check=False)
            except CommandError:
                pass
            self.id = 0
