"""Change-stream latency: from sending an insert to receiving its change event.

    python -m bench.change_stream_latency [--events 300] [--targets ginkgo-wire,secantus-wire,ginkgo-lmdb]

A watcher iterates `collection.watch()` while a second client inserts one document at a time,
each after the previous event arrived; the delay of each event is measured from just before its
insert was sent (so it includes the insert's own round trip and the commit). Reported: p50, p99,
max, in milliseconds. Server targets run in their own process, as in the main benchmark; an
embedded target runs its writer in a thread of the same process.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from typing import Any

from .per_target import measure_each, save
from .targets import make_target


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def measure(target_name: str, events: int) -> dict[str, Any]:
    workdir = tempfile.mkdtemp(prefix=f"cs-{target_name}-")
    target = make_target(target_name, workdir)
    watcher = target.open()
    writer = _second_client(target, watcher)
    coll = watcher.bench_cs.latency
    coll.drop()
    delays: list[float] = []
    try:
        with coll.watch(max_await_time_ms=10_000) as stream:
            wcoll = writer.bench_cs.latency
            for i in range(events):
                sent: list[float] = []

                def write(i: int = i, sent: list = sent) -> None:
                    sent.append(time.perf_counter())
                    wcoll.insert_one({"_id": i})

                thread = threading.Thread(target=write)
                thread.start()
                event = stream.next()
                delays.append(time.perf_counter() - sent[0])
                thread.join()
                assert event["documentKey"] == {"_id": i}, event
    finally:
        if writer is not watcher:
            writer.close()
        target.close()
    ms = [d * 1000 for d in delays]
    return {"target": target_name, "events": events, "p50_ms": round(statistics.median(ms), 2),
            "p99_ms": round(_percentile(ms, 0.99), 2), "max_ms": round(max(ms), 2)}


def _second_client(target: Any, watcher: Any) -> Any:
    """Another connection for the writes (over the wire); the same embedded client otherwise."""
    address = getattr(watcher, "address", None)
    if address is None:
        return watcher
    import pymongo
    return pymongo.MongoClient(*address, directConnection=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.change_stream_latency", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=300)
    p.add_argument("--targets", default="ginkgo-wire,ginkgo-lmdb,ginkgo-memory")
    p.add_argument("--json", default=None, help="also write the results here")
    args = p.parse_args(argv)
    results = measure_each(args.targets, lambda name: measure(name, args.events))
    if results is None:
        return 2
    print("\n| target | events | p50 (ms) | p99 (ms) | max (ms) |\n|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['target']} | error: {r['error']} | | | |")
        else:
            print(f"| {r['target']} | {r['events']} | {r['p50_ms']} | {r['p99_ms']} | {r['max_ms']} |")
    save(results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
