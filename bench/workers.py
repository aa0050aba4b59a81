"""`ginkgodb serve --workers N`: aggregate find_one-by-_id throughput over the wire from several
client processes, with 1 and 2 server processes (docs/design/workers.md).

    PYTHONPATH=<checkout> python -m bench.workers [--repeat 3] [--clients 4] [--seconds 5]

Each round starts a server (`serve --workers W` on a fresh data directory of 10,000 documents
of about 0.2 KB), then `--clients` spawned processes, each with its own pymongo client (one
connection), wait at a barrier and run `find_one({"_id": random})` for `--seconds`. With `--raw`
each client sends the same find commands, prepared as OP_MSG messages, on a plain socket and
reads each reply (one in 50 decoded and checked): pymongo's own CPU per call is larger than the
server's, so on a machine with few cores only such light clients leave the server cores to use. The rate is
all clients' operations over the window. Rounds alternate W = 1 and W = 2 (interleaved, so
that load from elsewhere on the machine falls on both alike); medians of `--repeat` pairs.
The load average is printed before and after, because the figures depend on it. Also printed:
the server's CPU time per find_one (the supervisor and its workers, from /proc, over the same
window), which says whether a second process adds work per operation, independently of how
much of the machine other programs leave free.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SPAWN = multiprocessing.get_context("spawn")
DOCUMENTS = 10_000


def _client(port: int, seconds: float, barrier, results, seed: int) -> None:
    import pymongo
    client = pymongo.MongoClient("127.0.0.1", port, maxPoolSize=1)
    coll = client.bench.items
    rng = random.Random(seed)
    for _ in range(200):   # warm: the connection, the catalog, the plan
        coll.find_one({"_id": rng.randrange(DOCUMENTS)})
    def fifty(done: int) -> None:
        for _ in range(50):
            coll.find_one({"_id": rng.randrange(DOCUMENTS)})

    results.put(_measured(barrier, seconds, fifty))
    client.close()


def _measured(barrier, seconds: float, fifty) -> tuple[int, float]:
    """(operations, CPU seconds) of `fifty(done)` (50 operations a call) run for `seconds` after
    every client reached the barrier."""
    barrier.wait()
    done = 0
    cpu = time.process_time()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        fifty(done)
        done += 50
    return done, time.process_time() - cpu


def _find_frames(rng: random.Random, count: int) -> list[bytes]:
    """`count` OP_MSG find_one messages by random `_id`, as pymongo frames them (kind-0 body)."""
    import struct

    import bson
    frames = []
    for request_id in range(1, count + 1):
        body = bson.encode({"find": "items", "filter": {"_id": rng.randrange(DOCUMENTS)}, "limit": 1,
                            "singleBatch": True, "$db": "bench"})
        payload = b"\x00\x00\x00\x00\x00" + body
        frames.append(struct.pack("<iiii", 16 + len(payload), request_id, 0, 2013) + payload)
    return frames


def _raw_client(port: int, seconds: float, barrier, results, seed: int) -> None:
    """`_client` with prepared messages on a plain socket: the same requests at a small fraction
    of pymongo's CPU, so that the server's own cost is what the machine's cores are shared by."""
    import socket
    import struct

    import bson
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    frames = _find_frames(random.Random(seed), 4096)
    recv_into, send = sock.recv_into, sock.sendall
    head = bytearray(16)
    buffer = bytearray(1 << 16)

    def round_trip(frame: bytes) -> memoryview:
        send(frame)
        got = 0
        while got < 16:
            got += recv_into(memoryview(head)[got:], 16 - got)
        length = struct.unpack_from("<i", head)[0] - 16
        view = memoryview(buffer)[:length]
        got = 0
        while got < length:
            got += recv_into(view[got:], length - got)
        return view

    for frame in frames[:200]:   # warm, and check that the server answers documents
        reply = bson.decode(bytes(round_trip(frame)[5:]))
        assert reply["ok"] == 1.0 and len(reply["cursor"]["firstBatch"]) == 1, reply
    def fifty(done: int) -> None:
        for i in range(49):
            round_trip(frames[(done + i) & 4095])
        reply = bson.decode(bytes(round_trip(frames[(done + 49) & 4095])[5:]))   # one in 50 checked
        assert reply["ok"] == 1.0 and len(reply["cursor"]["firstBatch"]) == 1, reply

    results.put(_measured(barrier, seconds, fifty))
    sock.close()


def _server(workers: int, path: str) -> tuple[subprocess.Popen, int]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "ginkgodb.cli", "serve", "--port", "0", "--dbpath", path,
                             "--workers", str(workers), "--quiet"], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    for line in proc.stdout:
        if '"Waiting for connections"' in line:
            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return proc, int(json.loads(line)["attr"]["port"])
    raise RuntimeError("the server did not start")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children (the workers), from /proc."""
    total = 0.0
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            children = [int(c) for c in f.read().split()]
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0
    return total + sum(_cpu_seconds(c) for c in children)


def one_round(workers: int, clients: int, seconds: float, raw: bool = False) -> tuple[float, float, float]:
    """(aggregate find_one/s, server and client CPU microseconds per find_one) of `clients`
    processes (pymongo's, or `raw`: prepared messages on plain sockets) against a server of
    `workers` processes."""
    import pymongo
    path = tempfile.mkdtemp(prefix="bench-workers-")
    proc, port = _server(workers, path)
    try:
        seed = pymongo.MongoClient("127.0.0.1", port)
        seed.bench.items.insert_many([{"_id": i, "k": i, "s": "x" * 200} for i in range(DOCUMENTS)])
        seed.close()
        barrier = SPAWN.Barrier(clients + 1)
        results = SPAWN.Queue()
        client = _raw_client if raw else _client
        procs = [SPAWN.Process(target=client, args=(port, seconds, barrier, results, me)) for me in range(clients)]
        for p in procs:
            p.start()
        barrier.wait()
        cpu = _cpu_seconds(proc.pid)
        reports = [results.get(timeout=600) for _ in procs]
        cpu = _cpu_seconds(proc.pid) - cpu
        total = sum(done for done, _ in reports)
        client_cpu = sum(spent for _, spent in reports)
        for p in procs:
            p.join()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
        shutil.rmtree(path, ignore_errors=True)   # each round's directory holds a preallocated reserve
    return total / seconds, cpu / total * 1e6, client_cpu / total * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--raw", action="store_true",
                        help="clients send prepared OP_MSG finds on plain sockets instead of using pymongo")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}  load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rates: dict[int, list[float]] = {1: [], 2: []}
    costs: dict[int, list[float]] = {1: [], 2: []}
    for r in range(args.repeat):
        for workers in (1, 2) if r % 2 == 0 else (2, 1):
            rate, cost, client_cost = one_round(workers, args.clients, args.seconds, args.raw)
            rates[workers].append(rate)
            costs[workers].append(cost)
            print(f"round {r + 1}: --workers {workers}: {rate:,.0f} find_one/s, CPU per op: server {cost:,.0f} us, "
                  f"clients {client_cost:,.0f} us (load {os.getloadavg()[0]:.2f})", flush=True)
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    print(f"median --workers 1: {one:,.0f}/s  --workers 2: {two:,.0f}/s  ratio {two / one:.2f}x")
    print(f"median server CPU per find_one: --workers 1: {statistics.median(costs[1]):,.0f} us  "
          f"--workers 2: {statistics.median(costs[2]):,.0f} us")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
