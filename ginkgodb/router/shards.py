"""Connections to the shards: one pymongo client per shard, versioned requests, shard cursors.

pymongo does the wire work (pooling, OP_MSG, server selection and failover inside a replica-set
shard). A shard's host string is mongos' form: `rs/host:port,host:port` for a replica set,
`host:port` for a single server.

Reads on the hot path (`Shards.fast_command`: a targeted find) skip pymongo's per-command
work (implicit session, server selection, retry machinery: half a direct read's cost, measured
with bench/sharding.py) and go as one OP_MSG on a pooled socket to the primary pymongo
found; any socket error or not-primary answer falls back to pymongo, which rediscovers.
"""
from __future__ import annotations

import itertools
import socket
import struct
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Optional

import bson
import pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo.errors import ConnectionFailure, OperationFailure, PyMongoError

from ..bsonutil.delta import elements
from ..errors import CommandError, ErrorCode

RAW = CodecOptions(document_class=RawBSONDocument, tz_aware=False)
PLAIN: CodecOptions = CodecOptions(document_class=dict, tz_aware=False)
STALE_CONFIG = int(ErrorCode.StaleConfig)
SET_VERSION = "_ginkgoSetShardVersion"
GETMORE_BYTES = 4 * 1024 * 1024
OP_MSG = 2013
_HEADER = struct.Struct("<iiii")
#: answers that say the address is no longer the primary: pymongo rediscovers it
NOT_PRIMARY = frozenset(int(c) for c in (ErrorCode.NotWritablePrimary, ErrorCode.NotPrimaryNoSecondaryOk,
                                         ErrorCode.NotPrimaryOrSecondary, ErrorCode.InterruptedDueToReplStateChange,
                                         ErrorCode.PrimarySteppedDown, ErrorCode.ShutdownInProgress,
                                         ErrorCode.InterruptedAtShutdown))
MAX_IDLE_SOCKETS = 32
RECV_BYTES = 1 << 16
SOCKET_TIMEOUT = 30.0


def connection_uri(host: str) -> str:
    name, sep, members = host.partition("/")
    if sep:
        return f"mongodb://{members}/?replicaSet={name}"
    return f"mongodb://{host}/?directConnection=true"


_F64 = struct.Struct("<d")
_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_NUMBERS = {0x01: _F64, 0x10: _I32, 0x12: _I64}


def peek(raw: bytes | memoryview, *path: bytes) -> Any:
    """The number at `path` (field names, through sub-documents) of a raw reply, None when it
    is absent or not a number: a shard's `ok`, `code` or `cursor.id` read without inflating the
    reply (RawBSONDocument decodes every top-level field on the first access)."""
    if not isinstance(raw, bytes):
        raw = bytes(raw)
    start = 0
    for depth, name in enumerate(path):
        for field, t, _, value, _ in elements(raw, start):
            if field == name:
                if depth == len(path) - 1:
                    number = _NUMBERS.get(t)
                    return number.unpack_from(raw, value)[0] if number is not None else None
                if t != 0x03:
                    return None
                start = value
                break
        else:
            return None
    return None


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


class WirePool:
    """Idle OP_MSG sockets to one server address: a request is one send and one reply, the
    socket back in the pool after it (none of pymongo's session or retry work)."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.address = address
        self._idle: list[socket.socket] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    def _take(self) -> socket.socket:
        """An idle socket, else a new one. An idle socket the server closed (it restarted) is
        not probed here: its exchange fails (OSError) and the caller falls back to pymongo, which
        reconnects; only reads, which may be sent again, travel on these sockets."""
        with self._lock:
            if self._idle:
                return self._idle.pop()
        sock = socket.create_connection(self.address, timeout=SOCKET_TIMEOUT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        blocking_with_deadline(sock, SOCKET_TIMEOUT)
        return sock

    def _give(self, sock: socket.socket) -> None:
        with self._lock:
            if len(self._idle) < MAX_IDLE_SOCKETS:
                self._idle.append(sock)
                return
        sock.close()

    def exchange(self, doc: Mapping) -> RawBSONDocument:
        """Send `doc` (a command with its `$db`) and return the reply document, undecoded.
        Raises OSError (the socket is dropped then)."""
        return RawBSONDocument(self.exchange_bytes(bson.encode(doc))[21:], RAW)

    def exchange_bytes(self, body: bytes) -> bytes:
        """Send one command document given as its BSON bytes (`$db` included); the whole reply
        message, header included (an OP_MSG whose first section is the reply document). Raises
        OSError (the socket is dropped then)."""
        request_id = next(self._ids) & 0x7FFFFFFF
        message = _HEADER.pack(21 + len(body), request_id, 0, OP_MSG) + b"\0\0\0\0\0" + body
        sock = self._take()
        try:
            sock.sendall(message)
            reply = _recv_message(sock)
            length, _, response_to, op_code = _HEADER.unpack_from(reply)
            if op_code != OP_MSG or response_to != request_id or length < 26 or reply[20] != 0:
                raise OSError(f"unexpected reply from {self.address}: opcode {op_code}")
        except BaseException:
            sock.close()
            raise
        self._give(sock)
        return reply

    def close(self) -> None:
        with self._lock:
            for sock in self._idle:
                sock.close()
            self._idle.clear()


def blocking_with_deadline(sock: socket.socket, seconds: float) -> None:
    """Make `sock` blocking with the kernel's send and receive timeouts (SO_SNDTIMEO,
    SO_RCVTIMEO): a send or receive that waits longer fails (OSError) as with Python's socket
    timeout, but without the poll() Python puts before every call on a socket with a timeout
    (one system call and one release of the GIL more per send and per receive)."""
    sock.settimeout(None)
    whole = int(seconds)
    value = struct.pack("ll", whole, int((seconds - whole) * 1e6))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, value)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, value)


def _recv_message(sock: socket.socket) -> bytes:
    """One whole reply message: most arrive in the first read (one system call, not two)."""
    data = sock.recv(RECV_BYTES)
    if not data:
        raise OSError("connection closed by the shard")
    if len(data) < 16:
        data += _recv_exact(sock, 16 - len(data))
    length = int.from_bytes(data[:4], "little", signed=True)
    if length < 16 or len(data) > length:
        raise OSError("bad message length")
    if len(data) < length:
        data += _recv_exact(sock, length - len(data))
    return data


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    if n < 0:
        raise OSError("bad message length")
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:])
        if not k:
            raise OSError("connection closed by the shard")
        got += k
    return bytes(buf)


class Shards:
    """The router's clients, by shard name (created on first use)."""

    def __init__(self) -> None:
        self._clients: dict[str, pymongo.MongoClient] = {}
        self._hosts: dict[str, str] = {}
        self._wires: dict[str, WirePool] = {}
        self._lock = threading.Lock()

    def register(self, name: str, host: str) -> None:
        with self._lock:
            if self._hosts.get(name) != host:
                old = self._clients.pop(name, None)
                if old is not None:
                    old.close()
                self._drop_wire(name)
                self._hosts[name] = host

    def unregister(self, name: str) -> None:
        with self._lock:
            self._hosts.pop(name, None)
            old = self._clients.pop(name, None)
            self._drop_wire(name)
        if old is not None:
            old.close()

    def _drop_wire(self, name: str) -> None:
        wire = self._wires.pop(name, None)
        if wire is not None:
            wire.close()

    def _wire(self, name: str) -> Optional[WirePool]:
        """The socket pool to the shard's primary (None while pymongo knows no primary)."""
        wire = self._wires.get(name)
        if wire is not None:
            return wire
        # pymongo's current view of the shard, without waiting: the writable member it knows
        writable = [sd.address for sd in self.client(name).topology_description.server_descriptions().values()
                    if sd.is_writable]
        if len(writable) != 1:
            return None
        host, port = writable[0]
        address = (host, port if port is not None else 27017)
        with self._lock:
            wire = self._wires.get(name)
            if wire is None or wire.address != address:
                self._drop_wire(name)
                wire = self._wires[name] = WirePool(address)
        return wire

    def primary_pool(self, name: str) -> Optional[WirePool]:
        """The socket pool to the shard's primary, None while pymongo knows no primary (the
        callers' pymongo path then finds it)."""
        return self._wire(name)

    def lost(self, shard: str, wire: WirePool) -> None:
        """`wire` failed (a socket error, or its address answered that it is not the primary):
        the next request asks pymongo for the primary again."""
        with self._lock:
            if self._wires.get(shard) is wire:
                self._drop_wire(shard)

    def fast_command(self, shard: str, db: str, cmd: Mapping) -> Any:
        """`command(shard, db, cmd, raw=True)` for a read, on the shard primary's pooled socket;
        pymongo's path whenever that socket fails or the address stopped being the primary."""
        wire = self._wire(shard)
        if wire is not None:
            try:
                reply = wire.exchange({**cmd, "$db": db})
            except OSError:
                with self._lock:
                    if self._wires.get(shard) is wire:
                        self._drop_wire(shard)
            else:
                code = None if peek(reply.raw, b"ok") == 1.0 else reply.get("code")
                if code is None or int(code) not in NOT_PRIMARY:
                    if code == STALE_CONFIG:
                        raise StaleConfig(dict(reply), shard)
                    return reply
                with self._lock:
                    if self._wires.get(shard) is wire:
                        self._drop_wire(shard)
        return self.command(shard, db, cmd, raw=True)

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
        shard cannot be reached. A command carrying a session (`lsid`: a transaction's statement,
        a retryable write) goes on a raw socket: pymongo would put its own session in its place."""
        if "lsid" in cmd:
            return self._session_command(shard, db, cmd, raw=raw, stale_check=stale_check)
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

    def _session_command(self, shard: str, db: str, cmd: Mapping, *, raw: bool, stale_check: bool) -> Any:
        """`cmd` with its own lsid, once, on the primary's socket: never re-sent here (a lost
        reply is HostUnreachable, and the client's retry brings the same txnNumber again)."""
        wire = self._wire(shard)
        if wire is None:   # pymongo finds the primary (or times out), then the socket goes to it
            try:
                self.client(shard).admin.command("ping")
            except PyMongoError as exc:
                raise CommandError(ErrorCode.HostUnreachable, f"shard {shard} unreachable: {exc}") from exc
            wire = self._wire(shard)
            if wire is None:
                raise CommandError(ErrorCode.HostUnreachable, f"shard {shard} has no primary")
        try:
            reply: Any = wire.exchange({**cmd, "$db": db})
        except OSError as exc:
            with self._lock:
                if self._wires.get(shard) is wire:
                    self._drop_wire(shard)
            # a retryable write may be sent again by the client (mongos labels it so)
            labels = ("RetryableWriteError",) if "txnNumber" in cmd and "autocommit" not in cmd else ()
            raise CommandError(ErrorCode.HostUnreachable, f"shard {shard} unreachable: {exc}",
                               labels=labels) from exc
        code = reply.get("code")
        if code is not None and int(code) in NOT_PRIMARY:
            with self._lock:
                if self._wires.get(shard) is wire:
                    self._drop_wire(shard)
        if not raw:
            reply = bson.decode(reply.raw)
        if stale_check and code == STALE_CONFIG:
            raise StaleConfig(dict(reply), shard)
        return reply

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()
            for name in list(self._wires):
                self._drop_wire(name)


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
