"""What a targeted read through the router costs in the Python it runs, in machine instructions
per operation (valgrind cachegrind; the figures do not move with the machine's load):

    PYTHONPATH=<checkout> python -m bench.routed_read_cost [--ops 200,2200]

- a shard's dispatch of `find {_id: X}` (limit 1, single batch, as a router sends it), decoded
  from its BSON bytes as the server does, without and with `shardVersion` (the shard's side of
  a versioned request: the version check, the in-flight count, the query statistics' key);
- the router's hashed shard key of an integer `_id` (bsonutil/keyhash.hash_value) and the whole
  choice of the owning shard (router/targeting.point_shard over a 4-chunk hashed map);
- the router's whole Python work on a targeted find but the system calls (its connection
  loop's framing and router/passthrough.answer: decode, cut, target, splice, the reply's peek
  and header), against a stand-in shard pool that returns a recorded reply.

Each figure is the difference between two runs of one operation with `--ops A,B` repetitions
after the same warm-up, divided by B - A: start-up, imports and warm-up cancel out.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from .cachegrind import instructions

OPERATIONS = ("find", "find+shardVersion", "hash_value(int)", "point_shard({_id: int})", "router passthrough")
_SCRATCH: list[str] = []   # a child's data directories, removed before it exits


def _shard_find(versioned: bool) -> Callable[[int], Any]:
    import bson
    from bson.objectid import ObjectId
    from bson.timestamp import Timestamp

    from ginkgodb.commands.context import CommandContext
    from ginkgodb.commands.dispatch import dispatch
    from ginkgodb.engine import Engine
    from ginkgodb.storage.lmdb_engine import LmdbEngine
    _SCRATCH.append(tempfile.mkdtemp(prefix="routed-read-cost-"))
    engine = Engine(LmdbEngine(os.path.join(_SCRATCH[-1], "data"), map_size=1 << 28))
    ctx = CommandContext(engine=engine)
    dispatch(ctx, {"insert": "c", "documents": [{"_id": i, "v": i} for i in range(1000)], "$db": "b"})
    epoch = ObjectId("000000000000000000000001")
    dispatch(ctx, {"_ginkgoSetShardVersion": "b.c", "e": epoch, "t": Timestamp(1, 1), "v": Timestamp(2, 0),
                   "$db": "admin"})
    extra = {"shardVersion": {"e": epoch, "t": Timestamp(1, 1), "v": Timestamp(2, 3)}} if versioned else {}
    requests = [bson.encode({"find": "c", "filter": {"_id": i}, "limit": 1, "singleBatch": True, "$db": "b",
                             **extra}) for i in range(1000)]

    def run(i: int) -> Any:
        reply = dispatch(ctx, bson.decode(requests[i % 1000]))
        assert reply["ok"] == 1.0 and reply["cursor"]["firstBatch"], reply
    return run


def _routing(whole: bool) -> Callable[[int], Any]:
    from bson.int64 import Int64
    from bson.max_key import MaxKey
    from bson.min_key import MinKey
    from bson.objectid import ObjectId
    from bson.timestamp import Timestamp

    from ginkgodb.bsonutil.keyhash import hash_value
    from ginkgodb.router.chunks import Chunk, ChunkMap
    from ginkgodb.router.shardkey import ShardKey
    from ginkgodb.router.targeting import point_shard
    if not whole:
        return lambda i: hash_value(i)
    bounds = [MinKey(), Int64(-(1 << 62)), Int64(0), Int64(1 << 62), MaxKey()]
    chunks = [Chunk({"_id": lo}, {"_id": hi}, f"shard{j % 2}", 1, j) for j, (lo, hi) in
              enumerate(zip(bounds, bounds[1:]))]
    cmap = ChunkMap("b.c", ShardKey({"_id": "hashed"}), ObjectId(), Timestamp(1, 1), chunks)
    filters = [{"_id": i} for i in range(1000)]
    return lambda i: point_shard(filters[i % 1000], cmap)


def _passthrough() -> Callable[[int], Any]:
    from bson.binary import Binary
    from bson.int64 import Int64
    from bson.objectid import ObjectId
    from bson.timestamp import Timestamp

    from ginkgodb.router import passthrough
    from ginkgodb.router.chunks import ChunkMap, initial_chunks
    from ginkgodb.router.shardkey import ShardKey
    from ginkgodb.wire.framing import FrameBuffer
    from ginkgodb.wire.op_msg import encode_op_msg
    key = ShardKey({"_id": "hashed"})
    cmap = ChunkMap("b.c", key, ObjectId(), Timestamp(5, 1), initial_chunks(key, ["s0", "s1"], "s0", 4))
    reply = encode_op_msg({"cursor": {"firstBatch": [{"_id": 7, "v": 7}], "id": Int64(0), "ns": "b.c"}, "ok": 1.0,
                           "$clusterTime": {"clusterTime": Timestamp(3, 3),
                                            "signature": {"hash": Binary(b"\0" * 20), "keyId": Int64(0)}},
                           "operationTime": Timestamp(3, 3)}, 900, 1)

    class Pool:
        def exchange_bytes(self, body: bytes) -> bytes:
            return reply

    class Shards:
        def primary_pool(self, shard: str) -> Pool:
            return Pool()

    class Router:
        shards = Shards()

        def chunk_map(self, ns: str) -> Any:
            return cmap if ns == "b.c" else None

    router: Any = Router()
    lsid = {"id": Binary(bytes(16), 4)}
    gossip = {"clusterTime": Timestamp(3, 3), "signature": {"hash": Binary(b"\0" * 20), "keyId": Int64(0)}}
    requests = [encode_op_msg({"find": "c", "filter": {"_id": i}, "limit": 1, "singleBatch": True, "lsid": lsid,
                               "$clusterTime": gossip, "$db": "b"}, i + 1, 0) for i in range(1000)]
    frames = FrameBuffer()

    def run(i: int) -> Any:
        frames.feed(requests[i % 1000])
        out = passthrough.answer(router, frames.next_frame(), i)
        assert isinstance(out, bytes), out
    return run


def child(op: str, repeat: int) -> None:
    """One counted run: build `op`, warm up, run it `repeat` times, exit at once."""
    from ginkgodb.storage import lmdb_engine
    # valgrind cannot reserve the default map's address space
    lmdb_engine.LmdbEngine.__init__.__kwdefaults__["map_size"] = 1 << 28
    run = {"find": lambda: _shard_find(False), "find+shardVersion": lambda: _shard_find(True),
           "hash_value(int)": lambda: _routing(False), "point_shard({_id: int})": lambda: _routing(True),
           "router passthrough": _passthrough}[op]()
    for i in range(200):
        run(i)
    for i in range(repeat):
        run(i)
    for path in _SCRATCH:   # the same work in both counted runs: it cancels out
        shutil.rmtree(path, ignore_errors=True)
    os._exit(0)


def count(op: str, repeat: int) -> int:
    """Instructions of one child run under cachegrind."""
    return instructions("bench.routed_read_cost", ["--child", op, "--repeat", str(repeat)])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", default="200,2200", help="the two repetition counts A,B")
    p.add_argument("--only", choices=OPERATIONS, action="append", help="measure only these operations")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--repeat", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child, args.repeat)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    low, high = (int(x) for x in args.ops.split(","))
    print(f"{'operation':<28} {'instructions per operation':>28}")
    for op in args.only or OPERATIONS:
        runs = [count(op, r) for r in (low, high)]
        print(f"{op:<28} {(runs[1] - runs[0]) / (high - low):28,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
