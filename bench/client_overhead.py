"""What the embedded client adds on top of `commands.dispatch`, per operation.

For each operation the client call and the command it sends, run through `dispatch` directly,
are timed in the same process on the same in-memory database, in alternating blocks, so
machine load hits both alike (see `measure`). Overhead = client time - dispatch time. Absolute
numbers are noisy on a loaded machine; compare the overhead column.

    python -m bench.client_overhead [--docs 20000] [--blocks 100] [--profile OP]

`--profile OP` runs cProfile over the client calls of one operation instead (dispatch included;
the client's own functions are those under ginkgodb/client), sorted by tottime, with the number
of function calls per operation.

The floors printed last are costs every client pays and no client-side change removes:
decoding one result document (find_one, find(), find_one_and_update) and encoding one inserted
document (insert_one, insert_many).
"""
from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import itertools
import pstats
import time
from collections.abc import Callable
from typing import Any

import bson
from bson.raw_bson import RawBSONDocument

from ginkgodb import MongoClient
from ginkgodb.commands import dispatch

DB, COLL = "bench", "docs"
BATCH = 100          # insert_many batch size, find() result size


def make_doc(i: int) -> dict:
    """About 0.5 KB of BSON: scalars, a nested document and an array of subdocuments."""
    return {
        "_id": i, "k": i // 10, "sku": f"SKU-{i:09d}", "price": i * 0.25, "n": 0,
        "created": dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i),
        "title": f"item number {i} of the benchmark set",
        "status": ("active", "inactive", "archived")[i % 3],
        "address": {"city": f"city-{i % 30:02d}", "zip": f"{i % 99999:05d}",
                    "geo": {"lat": (i % 180) - 90.0, "lng": (i % 360) - 180.0}},
        "lines": [{"sku": f"L-{i}-{j}", "qty": j + 1, "price": j * 1.5, "tag": f"tag-{j}"}
                  for j in range(5)],
        "tags": ["alpha", "bravo", f"t{i % 50}"],
    }


class Setup:
    """An in-memory client, its collection, and the dispatch context underneath it."""

    def __init__(self, n_docs: int) -> None:
        self.client = MongoClient()
        self.coll = self.client[DB][COLL]
        self.ctx = self.client._runner.channel.context
        for start in range(0, n_docs, 1000):
            self.coll.insert_many([make_doc(i) for i in range(start, min(start + 1000, n_docs))])
        self.n_docs = n_docs
        self.fresh = itertools.count(10 ** 9)   # ids of documents made during the run

    def raw(self, cmd: dict) -> Any:
        cmd["$db"] = DB
        reply = dispatch(self.ctx, cmd)
        if not reply.get("ok"):
            raise RuntimeError(reply)
        return reply


WARM_UP = 20


def _ids(setup: Setup, calls: int) -> tuple[list[int], list[int]]:
    """Two disjoint lists of document ids: one for the client side, one for dispatch."""
    step = max(2, setup.n_docs // calls // 2 * 2)
    mine = [(i * step) % setup.n_docs for i in range(calls)]
    return mine, [i + 1 for i in mine]


def _docs(setup: Setup, count: int) -> list[dict]:
    return [make_doc(next(setup.fresh)) for _ in range(count)]


def _raw_docs(setup: Setup, count: int) -> list[RawBSONDocument]:
    return [RawBSONDocument(bson.encode(doc)) for doc in _docs(setup, count)]


# A pair: (client call, the same command through dispatch, operations per call). Both take the
# call's number n (0 <= n < calls + WARM_UP); inputs are made before timing starts.
Pair = tuple[Callable[[int], Any], Callable[[int], Any], int]


def find_one(setup: Setup, calls: int) -> Pair:
    coll, raw = setup.coll, setup.raw
    mine, theirs = _ids(setup, calls + WARM_UP)
    return (lambda n: coll.find_one({"_id": mine[n]}),
            lambda n: raw({"find": COLL, "filter": {"_id": theirs[n]}, "limit": 1,
                           "singleBatch": True}), 1)


def insert_one(setup: Setup, calls: int) -> Pair:
    """Dispatch is given a dict, as a caller would write the command (the engine encodes it)."""
    coll, raw = setup.coll, setup.raw
    mine, theirs = _docs(setup, calls + WARM_UP), _docs(setup, calls + WARM_UP)
    return (lambda n: coll.insert_one(mine[n]),
            lambda n: raw({"insert": COLL, "ordered": True, "documents": [theirs[n]]}), 1)


def insert_one_raw(setup: Setup, calls: int) -> Pair:
    """Dispatch is given what the client sends: the document already encoded (RawBSONDocument,
    as the wire server passes it), so the client's own encoding counts as its overhead."""
    coll, raw = setup.coll, setup.raw
    mine, theirs = _docs(setup, calls + WARM_UP), _raw_docs(setup, calls + WARM_UP)
    return (lambda n: coll.insert_one(mine[n]),
            lambda n: raw({"insert": COLL, "ordered": True, "documents": [theirs[n]]}), 1)


def update_one(setup: Setup, calls: int) -> Pair:
    """Each update sets a value never set before, so every one modifies its document."""
    coll, raw, fresh = setup.coll, setup.raw, setup.fresh
    mine, theirs = _ids(setup, calls + WARM_UP)
    return (lambda n: coll.update_one({"_id": mine[n]}, {"$set": {"price": next(fresh) / 4}}),
            lambda n: raw({"update": COLL, "ordered": True,
                           "updates": [{"q": {"_id": theirs[n]},
                                        "u": {"$set": {"price": next(fresh) / 4}},
                                        "multi": False, "upsert": False}]}), 1)


def find_one_and_update(setup: Setup, calls: int) -> Pair:
    coll, raw = setup.coll, setup.raw
    mine, theirs = _ids(setup, calls + WARM_UP)
    return (lambda n: coll.find_one_and_update({"_id": mine[n]}, {"$inc": {"n": 1}}),
            lambda n: raw({"findAndModify": COLL, "query": {"_id": theirs[n]}, "new": False,
                           "update": {"$inc": {"n": 1}}}), 1)


def delete_one(setup: Setup, calls: int) -> Pair:
    coll, raw = setup.coll, setup.raw
    mine, theirs = _docs(setup, calls + WARM_UP), _docs(setup, calls + WARM_UP)
    coll.insert_many(mine + theirs)
    return (lambda n: coll.delete_one({"_id": mine[n]["_id"]}),
            lambda n: raw({"delete": COLL, "ordered": True,
                           "deletes": [{"q": {"_id": theirs[n]["_id"]}, "limit": 1}]}), 1)


def find_iterate(setup: Setup, calls: int) -> Pair:
    """Per document: a find() of BATCH documents iterated to the end."""
    coll, raw = setup.coll, setup.raw
    lows = [(n * 97 * BATCH) % (setup.n_docs - BATCH) for n in range(calls + WARM_UP)]

    def iterate(n: int) -> None:
        for _ in coll.find({"_id": {"$gte": lows[n], "$lt": lows[n] + BATCH}}):
            pass

    return (iterate, lambda n: raw({"find": COLL, "filter": {"_id": {"$gte": lows[n],
                                                                   "$lt": lows[n] + BATCH}}}),
            BATCH)


def insert_many(setup: Setup, calls: int) -> Pair:
    """Per document: insert_many of BATCH documents (dispatch given dicts, as insert_one)."""
    coll, raw = setup.coll, setup.raw
    mine = [_docs(setup, BATCH) for _ in range(calls + WARM_UP)]
    theirs = [_docs(setup, BATCH) for _ in range(calls + WARM_UP)]
    return (lambda n: coll.insert_many(mine[n]),
            lambda n: raw({"insert": COLL, "ordered": True, "documents": theirs[n]}), BATCH)


OPERATIONS: dict[str, Callable[[Setup, int], Pair]] = {
    "find_one": find_one, "insert_one": insert_one, "insert_one (raw doc)": insert_one_raw,
    "update_one": update_one, "find_one_and_update": find_one_and_update,
    "delete_one": delete_one, "find() per doc": find_iterate,
    "insert_many per doc": insert_many,
}
BATCHED = {"find() per doc", "insert_many per doc"}


BLOCK = 20    # calls per timed block (batched operations: 1)


def _blocks(setup: Setup, name: str, blocks: int) -> tuple[Pair, int]:
    block = 1 if name in BATCHED else BLOCK
    return OPERATIONS[name](setup, blocks * block), block


def measure(setup: Setup, blocks: int) -> list[tuple[str, float, float]]:
    """(name, client µs/op, dispatch µs/op): the best block of each side.

    Blocks of client calls and blocks of the same commands through dispatch alternate, so load
    on the machine hits both sides alike; load only ever adds time, so the fastest block is the
    steadiest estimate of each side's own cost.
    """
    rows = []
    clock = time.perf_counter_ns
    for name in OPERATIONS:
        (client_call, raw_call, per_call), block = _blocks(setup, name, blocks)
        for n in range(blocks * block, blocks * block + WARM_UP):
            client_call(n), raw_call(n)
        best_client = best_raw = float("inf")
        for start in range(0, blocks * block, block):
            t0 = clock()
            for n in range(start, start + block):
                client_call(n)
            t1 = clock()
            for n in range(start, start + block):
                raw_call(n)
            t2 = clock()
            best_client, best_raw = min(best_client, t1 - t0), min(best_raw, t2 - t1)
        scale = block * per_call * 1e3
        rows.append((name, best_client / scale, best_raw / scale))
    return rows


def profile(setup: Setup, blocks: int, name: str, limit: int = 30) -> None:
    (client_call, _, per_call), block = _blocks(setup, name, blocks)
    calls = blocks * block
    for n in range(calls, calls + WARM_UP):
        client_call(n)
    prof = cProfile.Profile()
    prof.runcall(lambda: [client_call(n) for n in range(calls)])
    stats = pstats.Stats(prof)
    count = sum(v[1] for v in stats.stats.values())   # primitive + recursive calls
    print(f"{name}: {count / calls / per_call:.1f} function calls per operation")
    stats.sort_stats("tottime").print_stats(limit)


def floors(blocks: int) -> tuple[float, float]:
    """(µs to decode one result document, µs to encode one inserted document)."""
    doc = make_doc(12345)
    data = bson.encode(doc)
    clock = time.perf_counter_ns
    best_decode = best_encode = float("inf")
    for _ in range(blocks):
        t0 = clock()
        for _ in range(BLOCK):
            bson.decode(data)
        t1 = clock()
        for _ in range(BLOCK):
            bson.encode(doc)
        t2 = clock()
        best_decode, best_encode = min(best_decode, t1 - t0), min(best_encode, t2 - t1)
    return best_decode / BLOCK / 1e3, best_encode / BLOCK / 1e3


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--blocks", type=int, default=100, help="timed blocks per side")
    parser.add_argument("--profile", metavar="OP", choices=sorted(OPERATIONS),
                        help="cProfile the client side of OP")
    args = parser.parse_args(argv)
    setup = Setup(args.docs)
    if args.profile:
        profile(setup, args.blocks, args.profile)
        return
    print(f"{'operation':<22}{'client µs':>11}{'dispatch µs':>13}{'overhead µs':>13}{'ratio':>7}")
    for name, client_us, raw_us in measure(setup, args.blocks):
        print(f"{name:<22}{client_us:>11.1f}{raw_us:>13.1f}{client_us - raw_us:>13.1f}"
              f"{client_us / raw_us:>7.2f}")
    decode_us, encode_us = floors(args.blocks)
    print(f"floors: decode one document {decode_us:.1f} µs, encode one document {encode_us:.1f} µs")


if __name__ == "__main__":
    main()
