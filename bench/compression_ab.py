"""W7 (the full scan) and W4 (find_one by _id) on the same 20,000 documents stored plain, with
snappy and with zstd (whose collection trains its dictionary at 1,000 documents), interleaved,
best of 9 rounds each: the codecs' read cost against each other in one process, so that a noisy
machine affects them alike.

    python -m bench.compression_ab
"""
from __future__ import annotations

import random
import shutil
import tempfile
import time

import ginkgodb

from .documents import Dataset
from .queries import SCAN_FILTER

CODECS = ("none", "snappy", "zstd")
ROUNDS = 9
FINDS = 2000


def main() -> None:
    path = tempfile.mkdtemp(prefix="compression-ab-")
    client = ginkgodb.MongoClient(path)
    try:
        docs = [d for batch in Dataset(20_000).batches(1000) for d in batch]
        ids = [d["_id"] for d in docs]
        for codec in CODECS:
            client.db.create_collection(codec, storageEngine={"ginkgodb": {"compression": codec}})
            for start in range(0, len(docs), 1000):
                client.db[codec].insert_many([dict(d) for d in docs[start:start + 1000]])
        best = {codec: [0.0, 0.0] for codec in CODECS}
        for _ in range(ROUNDS):
            for codec in CODECS:
                coll = client.db[codec]
                start = time.perf_counter()
                list(coll.find(SCAN_FILTER))
                best[codec][0] = max(best[codec][0], len(docs) / (time.perf_counter() - start))
                start = time.perf_counter()
                for _ in range(FINDS):
                    coll.find_one({"_id": random.choice(ids)})
                best[codec][1] = max(best[codec][1], FINDS / (time.perf_counter() - start))
        plain_w7, plain_w4 = best["none"]
        for codec in CODECS:
            stats = client.db.command("collStats", codec)
            w7, w4 = best[codec]
            print(f"{codec}: storageSize/size {stats['storageSize'] / stats['size']:.3f}, "
                  f"W7 {w7:,.0f} docs/s ({w7 / plain_w7:.2f}x), W4 {w4:,.0f} ops/s ({w4 / plain_w4:.2f}x)")
    finally:
        client.close()
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
