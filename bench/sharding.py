"""A sharded cluster on loopback (`ginkgodb cluster start --shards 2 --nodes 1`; needs etcd):

    PYTHONPATH=<checkout> python -m bench.sharding [--docs 5000] [--samples 300] [--repeats 1]

- inserts with a hashed shard key (`{_id: "hashed"}`, presplit) vs a monotonically increasing
  range key (`{ts: 1}`, the top chunk [0, MaxKey) on the second shard, as after any split of a
  growing key): per-shard counts and the insert rate through the router;
- find latency through the router: targeted (`{_id: X}` on the hashed key: one shard) and
  broadcast (`{v: X}`: both shards, merged), against the same read sent directly to the shard
  that holds the document, and a read of an unsharded collection through the router (its
  database's primary shard), p50/p99; the reads alternate sample by sample, so that the
  machine's load weighs on each alike; `--repeats R` runs the interleaved rows R times and adds
  each row's median ratio to the direct read and its spread (lowest-highest) over the repeats;
  a row through a byte pump (a process per shard that only copies bytes between the client and
  the shard, a thread per direction: `--pump LISTEN TARGET` runs one) gives the floor of any
  router on this machine, the cost of the hop alone; a second pump row reads each whole
  message on one thread per connection (the router's own shape, no thread hand-off);
- CPU per read of the router process and of the shard processes (/proc), for the targeted
  read through the router and the direct read (the shard's side of a versioned request);
- a `$group` over the hashed collection (shard partials merged by the router) against the same
  documents in one unsharded collection;
- the advisor's estimate of the shard-key spread (`ginkgodb advise --shard-key`: analyzeShardKey
  on an unsharded copy of the same documents) next to the measured per-shard shares;
- moveChunk of one chunk of `--migrate-mb` MB (default 100; 0 skips it) between the shards.

Everything runs on one machine: the shards and the router share its cores with the client.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import pymongo

from ginkgodb import cluster, sharded_cluster


def _pump(listen: int, target: int, framed: bool = False) -> None:
    """Copy bytes between each client connection on `listen` and its own connection to
    `target`: what a hop costs with no work at all. A thread per direction; `framed`: one
    thread per connection that reads a whole request, sends it, reads the whole reply and sends
    it back (the router's own shape: no second thread to wake)."""
    def copy(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(1 << 16):
                dst.sendall(data)
        except OSError:
            pass
        src.close()
        dst.close()

    def message(src: socket.socket) -> bytes:
        data = src.recv(1 << 16)
        if not data:
            raise OSError("closed")
        while len(data) < 4 or len(data) < int.from_bytes(data[:4], "little"):
            more = src.recv(1 << 16)
            if not more:
                raise OSError("closed")
            data += more
        return data

    def relay(client: socket.socket, upstream: socket.socket) -> None:
        try:
            while True:
                upstream.sendall(message(client))
                client.sendall(message(upstream))
        except OSError:
            pass
        client.close()
        upstream.close()

    listener = socket.create_server(("127.0.0.1", listen))
    while True:
        client, _ = listener.accept()
        upstream = socket.create_connection(("127.0.0.1", target))
        for sock in (client, upstream):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if framed:
            threading.Thread(target=relay, args=(client, upstream), daemon=True).start()
            continue
        threading.Thread(target=copy, args=(upstream, client), daemon=True).start()
        threading.Thread(target=copy, args=(client, upstream), daemon=True).start()


def _cpu_us(pid: int) -> float:
    """CPU time (user + system) of process `pid` so far, in microseconds (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") * 1e6


def _cpu_rows(state: dict, reads: list[tuple[str, Any]], samples: int) -> None:
    """CPU per read of the router and of the shards (their processes' /proc counters over
    `samples` reads of each row, rows alternating in blocks of 100)."""
    pids = {"router": int(state["pids"]["router"]),
            "shards": [int(p) for k, p in state["pids"].items() if k.startswith("shard")]}
    spent = {label: [0.0, 0.0] for label, _ in reads}
    for block in range(0, samples, 100):
        for label, read in reads:
            before = (_cpu_us(pids["router"]), sum(_cpu_us(p) for p in pids["shards"]))
            for i in range(block, block + 100):
                read(i)
            spent[label][0] += _cpu_us(pids["router"]) - before[0]
            spent[label][1] += sum(_cpu_us(p) for p in pids["shards"]) - before[1]
    print(f"\n{'CPU per read, ' + str(samples) + ' reads a row':<44} {'router us':>9} {'shards us':>9}")
    for label, (router_us, shards_us) in spent.items():
        print(f"{label:<44} {router_us / samples:9.0f} {shards_us / samples:9.0f}")


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def _insert_rate(coll, docs: list[dict], batch: int = 100) -> float:
    started = time.perf_counter()
    for i in range(0, len(docs), batch):
        coll.insert_many(docs[i:i + batch], ordered=False)
    return len(docs) / (time.perf_counter() - started)


def _latency(read, samples: int) -> tuple[float, float]:
    times = []
    for i in range(samples):
        started = time.perf_counter()
        read(i)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), _percentile(times, 99)


def _interleaved(reads: list, samples: int) -> list[tuple[float, float]]:
    """(p50, p99) in ms of each read, the reads taking turns sample by sample."""
    times: list[list[float]] = [[] for _ in reads]
    for i in range(samples):
        for j, read in enumerate(reads):
            started = time.perf_counter()
            read(i)
            times[j].append((time.perf_counter() - started) * 1000)
    return [(statistics.median(t), _percentile(t, 99)) for t in times]


def _advisor_rows(router, shards: dict, docs: list[dict], name: str, key: dict) -> None:
    """The advisor's per-shard estimate for `key` vs the shares measured in `bench.<name>`."""
    from ginkgodb import MongoClient as EmbeddedClient
    from ginkgodb.advisor.shard_key import analyse
    local = EmbeddedClient()
    local.bench.copy.insert_many(docs)
    local.bench.copy.create_index([(f, 1 if d == 1 else "hashed") for f, d in key.items()])
    est = analyse(local, "bench.copy", key, list(local.bench.copy.find()), shards=2).estimates[0]
    local.close()
    counts = [shards[s].bench[name].count_documents({}) for s in ("shard0", "shard1")]
    measured = [round(n / max(1, sum(counts)), 3) for n in counts]
    print(f"{str(key):<44} {str(est['inserts']):>16} {str(measured):>16} "
          f"{max(abs(a - b) for a, b in zip(est['inserts'], measured)):7.3f}")


def _migration(router, shards: dict, megabytes: int) -> None:
    """moveChunk of one chunk holding `megabytes` MB (1 KB documents, written on its shard)."""
    router.admin.command("shardCollection", "bench.big", key={"k": 1})
    owner = router.config.chunks.find_one({"ns": "bench.big"})["shard"]
    other = "shard1" if owner == "shard0" else "shard0"
    n = megabytes * 1024
    pad = "x" * 1000
    started = time.perf_counter()
    for i in range(0, n, 2000):
        shards[owner].bench.big.insert_many([{"_id": j, "k": j, "p": pad} for j in range(i, min(n, i + 2000))],
                                            ordered=False)
    loaded = time.perf_counter() - started
    size = shards[owner].bench.command("collStats", "big")["size"] / 1e6
    started = time.perf_counter()
    router.admin.command("moveChunk", "bench.big", find={"k": 0}, to=other)
    took = time.perf_counter() - started
    moved = shards[other].bench.big.estimated_document_count()
    left = shards[owner].bench.big.estimated_document_count()
    print(f"\n{'moveChunk of one chunk':<44} {'MB':>9} {'docs':>7} {'seconds':>9} {'MB/s':>7}")
    print(f"{f'{owner} -> {other} (loaded in {loaded:.0f} s)':<44} {size:9.1f} {moved:7d} {took:9.1f} "
          f"{size / took:7.2f}")
    if moved != n or left != 0:
        print(f"  unexpected: {moved} documents on the recipient, {left} left on the donor")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--port", type=int, default=28700)
    parser.add_argument("--migrate-mb", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--pump", type=int, nargs=2, metavar=("LISTEN", "TARGET"), help=argparse.SUPPRESS)
    parser.add_argument("--framed", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pump:
        _pump(*args.pump, framed=args.framed)
        return 0
    directory = tempfile.mkdtemp(prefix="bench-sharded-")
    state = sharded_cluster.start(2, 1, args.port, directory)
    pumps: list[subprocess.Popen] = []
    try:
        router = pymongo.MongoClient(sharded_cluster.connection_string(state))
        router.admin.command("balancerStop")
        shards = {f"shard{i}": pymongo.MongoClient(f"127.0.0.1:{sharded_cluster.shard_state(state, i)['port']}",
                                                   directConnection=True) for i in range(2)}
        router.admin.command("shardCollection", "bench.hashed", key={"_id": "hashed"}, numInitialChunks=4)
        router.admin.command("shardCollection", "bench.mono", key={"ts": 1})
        router.admin.command("split", "bench.mono", middle={"ts": 0})
        router.admin.command("moveChunk", "bench.mono", find={"ts": 1}, to="shard1")
        print(f"{'inserts, 2 shards':<44} {'rate /s':>9} {'shard0':>7} {'shard1':>7} {'spread':>7}")
        for name, make in (("hashed", lambda i: {"_id": i, "v": i}), ("mono", lambda i: {"ts": i + 1, "v": i})):
            rate = _insert_rate(router.bench[name], [make(i) for i in range(args.docs)])
            counts = [shards[s].bench[name].count_documents({}) for s in ("shard0", "shard1")]
            spread = abs(counts[0] - counts[1]) / max(1, sum(counts))
            key = "{_id: hashed}" if name == "hashed" else "{ts: 1} (monotonic)"
            print(f"{'insert_many x100, key ' + key:<44} {rate:9.0f} {counts[0]:7d} {counts[1]:7d} {spread:7.1%}")

        router.bench.hashed.create_index("v")
        n = args.docs
        router.bench.one.insert_many([{"_id": i, "v": i} for i in range(n)], ordered=False)
        owner = {}
        for s, client in shards.items():
            for d in client.bench.hashed.find({}, {"_id": 1}):
                owner[d["_id"]] = s
        pumped: dict[str, pymongo.MongoClient] = {}
        framed: dict[str, pymongo.MongoClient] = {}
        for i, s in enumerate(shards):
            for k, (clients, extra) in enumerate(((pumped, []), (framed, ["--framed"]))):
                listen = args.port + 90 + 2 * i + k
                pumps.append(subprocess.Popen([sys.executable, "-m", "bench.sharding", "--pump", str(listen),
                                               str(sharded_cluster.shard_state(state, i)["port"]), *extra]))
                cluster._wait_port(listen, 30)
                clients[s] = pymongo.MongoClient(f"127.0.0.1:{listen}", directConnection=True)
        rows = [
            ("router, targeted {_id: X} (1 shard)", lambda i: router.bench.hashed.find_one({"_id": (i * 7) % n})),
            ("router, broadcast {v: X} (2 shards)", lambda i: router.bench.hashed.find_one({"v": (i * 7) % n})),
            ("router, unsharded collection {_id: X}", lambda i: router.bench.one.find_one({"_id": (i * 7) % n})),
            ("byte pump to the owning shard {_id: X}",
             lambda i: pumped[owner[(i * 7) % n]].bench.hashed.find_one({"_id": (i * 7) % n})),
            ("byte pump, one thread a connection",
             lambda i: framed[owner[(i * 7) % n]].bench.hashed.find_one({"_id": (i * 7) % n})),
            ("direct to the owning shard {_id: X}",
             lambda i: shards[owner[(i * 7) % n]].bench.hashed.find_one({"_id": (i * 7) % n})),
        ]
        for _, read in rows:   # warm the pools
            _latency(read, 20)
        ratios: list[list[float]] = [[] for _ in rows]
        for repeat in range(args.repeats):
            results = [(label, *stats) for (label, _), stats in zip(rows, _interleaved([r for _, r in rows],
                                                                                       args.samples))]
            direct = results[-1][1]
            title = "find_one latency (interleaved)" + (f", run {repeat + 1}" if args.repeats > 1 else "")
            print(f"\n{title:<44} {'p50 ms':>9} {'p99 ms':>7} {'vs direct':>9}")
            for j, (label, p50, p99) in enumerate(results):
                ratios[j].append(p50 / direct)
                print(f"{label:<44} {p50:9.2f} {p99:7.2f} {p50 / direct:8.2f}x")
        if args.repeats > 1:
            print(f"\n{'p50 vs direct over ' + str(args.repeats) + ' runs':<44} {'median':>9} {'lowest':>7} "
                  f"{'highest':>9}")
            for (label, _), r in zip(rows[:-1], ratios[:-1]):
                print(f"{label:<44} {statistics.median(r):8.2f}x {min(r):6.2f}x {max(r):8.2f}x")
        _cpu_rows(state, [rows[0], rows[-1]], 10 * args.samples)
        # $group: split into shard partials (2 shards) vs the same documents in one unsharded collection
        pipeline = [{"$group": {"_id": {"$mod": ["$v", 10]}, "n": {"$sum": 1}, "mean": {"$avg": "$v"}}}]
        print(f"\n{'$group of ' + str(n) + ' documents':<44} {'p50 ms':>9} {'p99 ms':>7}")
        for label, coll in (("2 shards (partials merged by the router)", router.bench.hashed),
                            ("one server (unsharded, via the router)", router.bench.one)):
            p50, p99 = _latency(lambda i, coll=coll: list(coll.aggregate(pipeline)), max(10, args.samples // 10))
            print(f"{label:<44} {p50:9.2f} {p99:7.2f}")
        print(f"\n{'advisor estimate vs measured, 2 shards':<44} {'est. inserts':>16} {'measured':>16} "
              f"{'max gap':>7}")
        _advisor_rows(router, shards, [{"_id": i, "v": i} for i in range(args.docs)], "hashed", {"_id": "hashed"})
        _advisor_rows(router, shards, [{"ts": i + 1, "v": i} for i in range(args.docs)], "mono", {"ts": 1})
        if args.migrate_mb:
            _migration(router, shards, args.migrate_mb)
        router.close()
        for client in (*shards.values(), *pumped.values(), *framed.values()):
            client.close()
    finally:
        for pump in pumps:
            pump.kill()
            pump.wait()
        cluster.stop(directory)
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
