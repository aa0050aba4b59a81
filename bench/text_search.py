"""`$text` queries per second on short product titles, against a `$regex` collection scan over
the same words (the seeds' alternative), on ginkgodb and the peers where they answer.

    python -m bench.text_search [--titles 100000] [--targets ginkgo-memory,ginkgo-lmdb,ginkgo-wire,mongomock,secantus-wire]

Each target gets the same N synthetic titles (bench.text_stemmers' generator: brand, adjective,
colour, noun, often an extra phrase), a text index on `title` where it builds one, then for a
fixed list of one- and two-word searches: `find({$text: {$search}})` read to the end, and
`find({title: {$regex: "\\b(w1|w2)", $options: "i"}})` read to the end (a collection scan: no
index serves an unanchored regex). Reported: load and index build seconds, queries per second
of each, their ratio, and the mean number of results. A target that refuses text indexes or
`$text` is reported with its error and measured on `$regex` alone. `--background` adds, on
ginkgodb targets, a rebuild of the index with `textIndexBuild: "background"`: createIndexes'
time to return, `$text` queries per second during the build, and the build's duration.
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from typing import Any

from .per_target import measure_each, save
from .targets import make_target
from .text_stemmers import titles

SEARCHES = ["kettle", "wireless headphones", "boots", "waterproof jacket", "candles", "camping",
            "rechargeable", "glasses", "walnut desk", "pillows", "running", "stickers"]
BATCH = 1000


def _regex(search: str) -> dict:
    words = "|".join(re.escape(w) for w in search.split())
    return {"title": {"$regex": f"\\b({words})", "$options": "i"}}


def _rate(coll: Any, filters: list[dict], min_seconds: float, max_queries: int,
          top: bool = False) -> tuple[float, float]:
    """(queries per second, mean results) running the filters round-robin for about min_seconds;
    `top`: the ten best by textScore, as a search page asks."""
    n = results = 0
    start = time.perf_counter()
    while True:
        filt = filters[n % len(filters)]
        if top:
            score = {"score": {"$meta": "textScore"}}
            cursor = coll.find(filt, score).sort(list(score.items())).limit(10)
        else:
            cursor = coll.find(filt, batch_size=BATCH)
        results += sum(1 for _ in cursor)
        n += 1
        elapsed = time.perf_counter() - start
        if n % len(filters) == 0 and (elapsed >= min_seconds or n >= max_queries):  # whole rounds
            return n / elapsed, results / n


def _background_build(coll: Any, filters: list[dict], min_seconds: float) -> dict[str, Any]:
    """ginkgodb's `textIndexBuild: "background"` (an extension): how long createIndexes takes to
    return, `$text` queries per second while the build catches up (answered from the index and
    a scan of the records not indexed yet), and how long until `$indexStats` shows it done."""
    coll.drop_index("title_text")
    start = time.perf_counter()
    coll.create_index([("title", "text")], textIndexBuild="background")
    returned = time.perf_counter() - start
    n = 0
    during = time.perf_counter()
    while time.perf_counter() - during < min_seconds:
        sum(1 for _ in coll.find(filters[n % len(filters)], batch_size=BATCH))
        n += 1
    during_qps = n / (time.perf_counter() - during)

    def building() -> bool:
        return any(s.get("building") for s in coll.aggregate([{"$indexStats": {}}]))
    while building():
        time.sleep(0.05)
    return {"background_create_s": round(returned, 3), "background_text_qps": round(during_qps, 1),
            "background_done_s": round(time.perf_counter() - start, 2)}


def measure(name: str, n_titles: int, min_seconds: float, background: bool = False) -> dict[str, Any]:
    workdir = tempfile.mkdtemp(prefix=f"text-{name}-")
    target = make_target(name, workdir)
    client = target.open()
    out: dict[str, Any] = {"target": name, "titles": n_titles}
    try:
        coll = client.bench_text.products
        coll.drop()
        docs = [{"_id": i, "title": " ".join(words), "price": i % 100} for i, words in enumerate(titles(n_titles))]
        start = time.perf_counter()
        for i in range(0, len(docs), 1000):
            coll.insert_many(docs[i:i + 1000])
        out["load_s"] = round(time.perf_counter() - start, 2)
        regex_filters = [_regex(s) for s in SEARCHES]
        try:
            start = time.perf_counter()
            coll.create_index([("title", "text")])
            out["index_build_s"] = round(time.perf_counter() - start, 2)
            text_filters = [{"$text": {"$search": s}} for s in SEARCHES]
            out["text_qps"], out["text_results"] = (round(v, 1) for v in _rate(coll, text_filters, min_seconds, 5000))
            out["text_top10_qps"] = round(_rate(coll, text_filters, min_seconds, 5000, top=True)[0], 1)
            if background and name.startswith("ginkgo"):
                out.update(_background_build(coll, text_filters, min_seconds))
        except Exception as exc:  # a peer refusing text search is reported, not fatal
            out["text_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
        out["regex_qps"], out["regex_results"] = (round(v, 2) for v in _rate(coll, regex_filters, min_seconds, 60))
        if "text_qps" in out:
            out["text_vs_regex"] = round(out["text_qps"] / out["regex_qps"], 1)
    finally:
        target.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.text_search", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--titles", type=int, default=100_000)
    p.add_argument("--seconds", type=float, default=3.0, help="minimum run time of each query kind")
    p.add_argument("--targets", default="ginkgo-memory,ginkgo-lmdb,ginkgo-wire,mongomock,secantus-wire")
    p.add_argument("--json", default=None, help="also write the results here")
    p.add_argument("--background", action="store_true",
                   help="ginkgodb targets: also rebuild the index with textIndexBuild: background")
    args = p.parse_args(argv)
    results = measure_each(args.targets, lambda name: measure(name, args.titles, args.seconds, args.background))
    if results is None:
        return 2
    print("\n| target | load (s) | text index (s) | $text q/s | $text top 10 by score q/s | $regex scan q/s | "
          "ratio | mean hits text / regex |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['target']} | error: {r['error']} | | | | | | |")
            continue
        text = r.get("text_qps", f"refused: {r.get('text_error', '')}")
        print(f"| {r['target']} | {r['load_s']} | {r.get('index_build_s', '-')} | {text} | "
              f"{r.get('text_top10_qps', '-')} | {r['regex_qps']} | "
              f"{r.get('text_vs_regex', '-')} | {r.get('text_results', '-')} / {r['regex_results']} |")
    if args.background:
        print("\n| target | background createIndexes returns (s) | $text q/s during the build | "
              "build done after (s) |\n|---|---|---|---|")
        for r in results:
            if "background_create_s" in r:
                print(f"| {r['target']} | {r['background_create_s']} | {r['background_text_qps']} | "
                      f"{r['background_done_s']} |")
    save(results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
