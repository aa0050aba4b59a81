"""Block compression of stored documents: sizes and read speed per codec (embedded, LMDB).

    python -m bench.compression [--n 20000] [--codecs none,snappy,zlib,zstd] [--out FILE]

For each codec: the benchmark's 0.5 KB documents (bench/documents.py) loaded into a collection
created with that codec, then collStats' size/storageSize, W4 (find_one by _id, ops/s) and W7
(the full scan with the compound filter, docs/s), best of three rounds; and 1,000 documents of
20 KB repetitive text (collStats and the data file's growth against the raw BSON). Last, whether
a zstd dictionary trained per collection would pay for the small documents: the ratio each
document gets compressed alone, with and without a 16 KB dictionary trained on 1,000 of them.
Codecs other than "none" need a ginkgodb with compression; an older one runs `--codecs none`.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from typing import Any

import bson

from .documents import Dataset
from .queries import SCAN_FILTER

TEXT = ("lorem ipsum dolor sit amet, consectetur adipiscing elit " * 400)[:20000]


def _client(path: str, codec: str) -> Any:
    from ginkgodb import MongoClient
    return MongoClient(path) if codec == "none" else MongoClient(path, storageCompression=codec)


def _best(rounds: int, run) -> float:
    return min(run() for _ in range(rounds))


def measure(codec: str, n: int, rounds: int = 3) -> dict[str, Any]:
    ds = Dataset(n)
    path = tempfile.mkdtemp(prefix=f"compress-{codec}-")
    client = _client(path, codec)
    try:
        coll = client.bench.docs
        for batch in ds.batches(1000):
            coll.insert_many(batch)
        stats = client.bench.command("collStats", "docs")
        rng = random.Random(7)
        ids = [ds.object_id(rng.randrange(n)) for _ in range(5000)]

        def point_reads() -> float:
            start = time.perf_counter()
            for oid in ids:
                coll.find_one({"_id": oid})
            return time.perf_counter() - start

        def scan() -> float:
            start = time.perf_counter()
            for _ in coll.find(SCAN_FILTER):
                pass
            return time.perf_counter() - start

        w4 = len(ids) / _best(rounds, point_reads)
        w7 = n / _best(rounds, scan)
        big = client.bench.big
        data_file = os.path.join(path, "data.mdb")
        before = os.path.getsize(data_file)
        docs = [{"_id": i, "text": TEXT, "n": i} for i in range(1000)]
        for start in range(0, 1000, 100):
            big.insert_many(docs[start:start + 100])
        big_stats = client.bench.command("collStats", "big")
        raw = sum(len(bson.encode(d)) for d in docs)
        grown = os.path.getsize(data_file) - before
    finally:
        client.close()
    return {"codec": codec, "n": n, "size": stats["size"], "storageSize": stats["storageSize"],
            "storage_ratio": round(stats["storageSize"] / stats["size"], 3),
            "W4_ops_s": round(w4), "W7_docs_s": round(w7),
            "big_raw": raw, "big_storageSize": big_stats["storageSize"],
            "big_storage_ratio": round(big_stats["storageSize"] / raw, 4),
            "big_file_growth_ratio": round(grown / raw, 4)}


def dictionary_measurement(n: int = 5000) -> dict[str, Any]:
    """Per-document zstd ratio on the 0.5 KB documents, without and with a trained dictionary."""
    import zstandard
    raws = [bson.encode(d) for d in Dataset(n).docs()]
    plain = zstandard.ZstdCompressor(level=3)
    trained = zstandard.train_dictionary(16 * 1024, raws[:1000])
    with_dict = zstandard.ZstdCompressor(level=3, dict_data=trained)
    test = raws[1000:]
    total = sum(map(len, test))
    alone = sum(min(len(r), len(plain.compress(r)) + 8) for r in test)
    dictionary = sum(min(len(r), len(with_dict.compress(r)) + 8) for r in test)
    decompressor = zstandard.ZstdDecompressor(dict_data=trained)
    packed = [with_dict.compress(r) for r in test]
    start = time.perf_counter()
    for p in packed:
        decompressor.decompress(p)
    per_doc_us = (time.perf_counter() - start) / len(packed) * 1e6
    return {"documents": len(test), "raw": total, "zstd_alone_ratio": round(alone / total, 3),
            "zstd_dictionary_ratio": round(dictionary / total, 3), "dictionary_bytes": 16 * 1024,
            "dictionary_decompress_us_per_doc": round(per_doc_us, 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=20_000)
    p.add_argument("--codecs", default="none,snappy,zlib,zstd")
    p.add_argument("--no-dictionary", action="store_true", help="skip the dictionary measurement")
    p.add_argument("--out", help="write the results as JSON to this file")
    args = p.parse_args(argv)
    results: list[dict[str, Any]] = []
    for codec in args.codecs.split(","):
        results.append(measure(codec, args.n))
        print(json.dumps(results[-1]), flush=True)
    if not args.no_dictionary:
        results.append({"dictionary": dictionary_measurement()})
        print(json.dumps(results[-1]), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
