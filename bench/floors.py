"""Floors: rates no Python engine can beat on this machine, measured in the same run.

F1  pymongo's C `bson` encode + decode of the data set's documents (docs/s); F1e and F1d time
    encode and decode alone. A Python engine that stores BSON must at least decode what it
    reads and encode what it writes, so these bound the rate of each workload.
F2  the W7 predicate as plain Python over the same documents already decoded in a list (docs/s):
    a scan cannot evaluate a filter faster than the interpreter can.
F3  pymongo's round trips against a server that answers only `ping` (ops/s): the ceiling for any
    wire target's per-operation rate.
"""
from __future__ import annotations

import os

import bson

from .documents import Dataset
from .queries import compute_expectations, scan_predicate
from .results import ERROR, OK, UNAVAILABLE, Result
from .targets.server_process import ServerProcess, python_argv
from .timing import measure

FLOOR_IDS = ("F1", "F1e", "F1d", "F2", "F3")
FLOOR_DOCS = 100_000  # documents held in memory for F1/F2
FLOOR_BUDGET = 10.0
CHUNK = 1_000


def run_floors(n: int, seed: int, budget: float, repeat: int) -> list[Result]:
    ds = Dataset(n, seed)
    docs = list(ds.docs(0, min(n, FLOOR_DOCS)))
    budget = min(budget, FLOOR_BUDGET)
    encoded = [bson.encode(d) for d in docs]
    return [
        _result("F1", n, repeat, "docs/s", bson_floor, docs, budget),
        _result("F1e", n, repeat, "docs/s", encode_floor, docs, budget),
        _result("F1d", n, repeat, "docs/s", decode_floor, encoded, budget),
        _result("F2", n, repeat, "docs/s", predicate_floor, docs, budget, ds),
        _result("F3", n, repeat, "ops/s", ping_floor, budget),
    ]


def bson_floor(docs: list[dict], budget: float) -> tuple[float, int, float, str]:
    encode, decode = bson.encode, bson.decode
    chunks = [docs[i:i + CHUNK] for i in range(0, len(docs), CHUNK)]

    def op(j: int) -> int:
        chunk = chunks[j % len(chunks)]
        for d in chunk:
            decode(encode(d))
        return len(chunk)

    s = measure(op, 10**9, budget)
    return s.rate, s.ops, s.seconds, ""


def encode_floor(docs: list[dict], budget: float) -> tuple[float, int, float, str]:
    return _per_item(bson.encode, docs, budget)


def decode_floor(encoded: list[bytes], budget: float) -> tuple[float, int, float, str]:
    return _per_item(bson.decode, encoded, budget)


def _per_item(fn, items: list, budget: float) -> tuple[float, int, float, str]:
    chunks = [items[i:i + CHUNK] for i in range(0, len(items), CHUNK)]

    def op(j: int) -> int:
        chunk = chunks[j % len(chunks)]
        for item in chunk:
            fn(item)
        return len(chunk)

    s = measure(op, 10**9, budget)
    return s.rate, s.ops, s.seconds, ""


def predicate_floor(docs: list[dict], budget: float, ds: Dataset) -> tuple[float, int, float, str]:
    predicate = scan_predicate
    counts: list[int] = []

    def op(j: int) -> int:
        counts.append(sum(1 for d in docs if predicate(d)))
        return len(docs)

    s = measure(op, 10**9, budget)
    if len(docs) == ds.n and counts[0] != compute_expectations(ds).scan_count:
        return s.rate, s.ops, s.seconds, "predicate disagrees with the expectations"
    return s.rate, s.ops, s.seconds, ""


def ping_floor(budget: float) -> tuple[float, int, float, str]:
    server, note = _floor_server()
    client = server.start()
    try:
        command = client.admin.command
        for _ in range(200):  # warm-up, as bench/wire_floor.py does
            command("ping")
        s = measure(lambda j: command("ping") and 1, 10**9, budget)
    finally:
        client.close()
        server.stop()
    return s.rate, s.ops, s.seconds, note


def _floor_server() -> tuple[ServerProcess, str]:
    """bench/ping_server.py, which bench/wire_floor.py also uses as its floor."""
    server = ServerProcess(lambda port: python_argv("-m", "bench.ping_server", "--port", str(port)),
                           os.devnull, os.getcwd())
    return server, "minimal asyncio.Protocol ping server (bench/ping_server.py, as in bench/wire_floor.py)"


def _result(fid: str, n: int, repeat: int, unit: str, fn, *args) -> Result:
    try:
        rate, ops, seconds, note = fn(*args)
    except Exception as exc:  # noqa: BLE001 - a missing floor is reported, not fatal
        status = UNAVAILABLE if fid == "F3" else ERROR
        return Result("floors", fid, n, status, unit=unit, detail=f"{type(exc).__name__}: {exc}",
                      repeat=repeat)
    status = ERROR if "disagrees" in note else OK
    return Result("floors", fid, n, status, rate=rate, unit=unit, ops=ops, seconds=seconds,
                  detail=note, repeat=repeat)
