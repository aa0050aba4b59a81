"""What the server spends on one W16 transaction, without the client or the socket: the three
OP_MSG requests pymongo sends for a transfer (`update` with startTransaction, `update`,
`commitTransaction`) fed to a server connection (server/protocol.py) in this process, the same
path `ginkgodb serve` runs from the bytes read to the bytes written.

    PYTHONPATH=<checkout> python -m bench.txn_cost [--txns 200,1200] [--valgrind] [--profile]

Without `--valgrind`: process CPU time per transaction (moves with the machine's load). With it:
instructions per transaction, the difference between two cachegrind runs of A and B transactions
after the same set-up and warm-up, divided by B - A (start-up and imports cancel out; the count
does not depend on the load). `--profile` prints cProfile's top functions for B transactions.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import shutil
import struct
import sys
import tempfile
import time
import uuid
from typing import Any

import bson
from bson.binary import Binary
from bson.int64 import Int64

from .cachegrind import instructions

ACCOUNTS = 1_000
WARM_UP = 100
_HEADER = struct.Struct("<iiii")
OP_MSG = 2013


class _Transport:
    """What a connection needs of an asyncio transport: the bytes written are kept."""

    def __init__(self) -> None:
        self.out: list[bytes] = []

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 50000) if name == "peername" else default

    def write(self, data: bytes) -> None:
        self.out.append(data)

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def op_msg(request_id: int, cmd: dict, sequence: tuple[str, list[dict]] | None = None) -> bytes:
    """An OP_MSG as pymongo sends it: the command as section 0, the documents as a kind-1 sequence."""
    body = b"\x00\x00\x00\x00\x00" + bson.encode(cmd)
    if sequence is not None:
        name, docs = sequence
        payload = name.encode() + b"\x00" + b"".join(bson.encode(d) for d in docs)
        body += b"\x01" + struct.pack("<i", len(payload) + 4) + payload
    return _HEADER.pack(16 + len(body), request_id, 0, OP_MSG) + body


def transfer_messages(lsid: dict, txn: int, src: int, dst: int, request_id: int) -> list[bytes]:
    """The three requests of one `with_transaction` transfer (what a command listener shows)."""
    session = {"lsid": lsid, "txnNumber": Int64(txn), "autocommit": False}
    first = {"update": "accounts", "ordered": True, **session, "startTransaction": True, "$db": "bench"}
    second = {"update": "accounts", "ordered": True, **session, "$db": "bench"}
    commit = {"commitTransaction": 1, **session, "$db": "admin"}
    return [op_msg(request_id, first, ("updates", [{"q": {"_id": src}, "u": {"$inc": {"balance": -1}}}])),
            op_msg(request_id + 1, second, ("updates", [{"q": {"_id": dst}, "u": {"$inc": {"balance": 1}}}])),
            op_msg(request_id + 2, commit)]


class Harness:
    """A server over an LMDB data directory and one connection to it."""

    def __init__(self, path: str) -> None:
        import asyncio

        from ginkgodb.engine import Engine
        from ginkgodb.server.config import ServerConfig
        from ginkgodb.server.lifecycle import Server
        from ginkgodb.server.protocol import ConnectionProtocol

        config = ServerConfig(port=0, bind=("127.0.0.1",), dbpath=path, quiet=True)
        self.engine = Engine.open(path, **config.storage_options())
        self.server = Server(config, self.engine)
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.transport = _Transport()
        self.conn = ConnectionProtocol(self.server)
        self.conn.connection_made(self.transport)  # type: ignore[arg-type]
        self.lsid = {"id": Binary(uuid.UUID(int=7).bytes, 4)}
        self.txn = 0
        self.request_id = 1
        self.rng = random.Random(16)
        self.loop.run_until_complete(self.send(op_msg(
            0, {"insert": "accounts", "ordered": True, "$db": "bench"},
            ("documents", [{"_id": i, "balance": 1_000} for i in range(ACCOUNTS)]))))

    async def send(self, message: bytes) -> bytes:
        """Feed one request; the reply's bytes (a worker-thread request: once the loop wrote it)."""
        import asyncio
        out = self.transport.out
        out.clear()
        self.conn.data_received(message)
        while not out:
            await asyncio.sleep(0.0005)
        return out[0]

    def messages(self, count: int) -> list[bytes]:
        """The requests of `count` transfers, made before they are sent (not the server's work)."""
        out = []
        for _ in range(count):
            self.txn += 1
            src, dst = self.rng.sample(range(ACCOUNTS), 2)
            out += transfer_messages(self.lsid, self.txn, src, dst, self.request_id)
            self.request_id += 3
        return out

    async def _send_all(self, messages: list[bytes]) -> None:
        for message in messages:
            reply = await self.send(message)
            if b"\x01ok\x00\x00\x00\x00\x00\x00\x00\xf0?" not in reply:
                raise RuntimeError(f"request failed: {bson.decode(reply[21:])}")

    def run(self, count: int) -> None:
        self.send_all(self.messages(count))

    def send_all(self, messages: list[bytes]) -> None:
        self.loop.run_until_complete(self._send_all(messages))


def _lower_map_size() -> None:
    """valgrind cannot reserve the default map's address space; W16's data needs far less."""
    from ginkgodb.storage import lmdb_engine
    lmdb_engine.LmdbEngine.__init__.__kwdefaults__["map_size"] = 1 << 30


def child(path: str, count: int, built: int) -> None:
    """One counted run: a fresh server over `path`, the warm-up, `count` transfers, exit at once.
    The requests of `built` transfers are made in every run, so that their making cancels out."""
    _lower_map_size()
    harness = Harness(path)
    harness.run(WARM_UP)
    messages = harness.messages(built)
    harness.send_all(messages[:3 * count])
    os._exit(0)


def count_instructions(count: int, built: int) -> int:
    scratch = tempfile.mkdtemp(prefix="txn-cost-")
    try:
        return instructions("bench.txn_cost", ["--child", scratch, "--count", str(count), "--built", str(built)])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def cpu_per_txn(count: int, profile: bool) -> float:
    """CPU microseconds per transfer over `count` transfers in this process."""
    scratch = tempfile.mkdtemp(prefix="txn-cost-")
    try:
        harness = Harness(scratch)
        harness.run(WARM_UP)
        messages = harness.messages(count)
        profiler = cProfile.Profile() if profile else None
        start = time.process_time()
        if profiler is not None:
            profiler.enable()
        harness.send_all(messages)
        if profiler is not None:
            profiler.disable()
        spent = time.process_time() - start
        if profiler is not None:
            pstats.Stats(profiler).sort_stats("tottime").print_stats(35)
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(60)
        harness.engine.close()
        return spent / count * 1e6
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--txns", default="200,1200", help="the two transaction counts A,B")
    p.add_argument("--valgrind", action="store_true", help="count instructions (cachegrind)")
    p.add_argument("--profile", action="store_true", help="print cProfile's top functions")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--count", type=int, help=argparse.SUPPRESS)
    p.add_argument("--built", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child, args.count, args.built)
        return 0
    low, high = (int(x) for x in args.txns.split(","))
    if args.valgrind:
        if shutil.which("valgrind") is None:
            print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
            return 2
        a, b = count_instructions(low, high), count_instructions(high, high)
        print(f"instructions per W16 transaction: {(b - a) / (high - low):,.0f} "
              f"({low:,} and {high:,} transactions)")
        return 0
    print(f"server CPU per W16 transaction: {cpu_per_txn(high, args.profile):,.0f} us "
          f"({high:,} transactions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
