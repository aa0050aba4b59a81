"""Stemmer throughput for text indexes: PyStemmer (C libstemmer) against snowballstemmer (pure Python).

    python -m bench.text_stemmers [--titles 100000] [--repeat 3]

Stems the words of N short synthetic product titles (5-9 words, English, plurals and -ing/-ed
forms included) with each stemmer and prints words per second (best of --repeat runs) and how
many stems differ between the two. snowballstemmer is imported from its per-language module so
that it does not hand the work to PyStemmer when both are installed.
"""
from __future__ import annotations

import argparse
import random
import time

BRANDS = ["Acme", "Northwind", "Contoso", "Fabrikam", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Tyrell"]
ADJECTIVES = ["wireless", "portable", "rechargeable", "waterproof", "adjustable", "ergonomic", "stainless",
              "lightweight", "foldable", "heavy-duty", "organic", "handmade", "vintage", "premium", "compact",
              "insulated", "cordless", "durable", "reusable", "scented", "padded", "reinforced", "brushed"]
NOUNS = ["headphones", "speaker", "charger", "bottle", "backpack", "jacket", "running shoes", "blender",
         "kettle", "mug", "lamp", "chair", "desk", "keyboard", "mouse", "monitor", "cable", "batteries",
         "knives", "pans", "cushions", "towels", "sheets", "candles", "glasses", "gloves", "boots",
         "watches", "wallets", "stickers", "brushes", "hangers", "shelves", "boxes", "baskets", "pillows"]
EXTRAS = ["for kids", "with case", "for travelling", "with handles", "for cooking", "set of 4", "pack of 12",
          "for running", "with charging dock", "for camping", "with adjustable straps", "for beginners"]
COLORS = ["black", "white", "red", "navy", "grey", "green", "rose gold", "silver", "matte", "walnut"]


def titles(n: int, seed: int = 7) -> list[list[str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts = [rng.choice(BRANDS), rng.choice(ADJECTIVES), rng.choice(COLORS), rng.choice(NOUNS)]
        if rng.random() < 0.7:
            parts.append(rng.choice(EXTRAS))
        out.append(" ".join(parts).replace("-", " ").lower().split())
    return out


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--titles", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    import Stemmer
    from snowballstemmer.english_stemmer import EnglishStemmer

    data = titles(args.titles)
    n_words = sum(len(t) for t in data)
    pure = EnglishStemmer()
    results = {}

    def pystemmer_batch(cache: int):
        stemmer = Stemmer.Stemmer("english", cache)
        return lambda: [stemmer.stemWords(t) for t in data]

    def pystemmer_words():
        stemmer = Stemmer.Stemmer("english")
        return lambda: [[stemmer.stemWord(w) for w in t] for t in data]

    cases = {
        "PyStemmer stemWords per title (default cache)": pystemmer_batch(10000),
        "PyStemmer stemWords per title (no cache)": pystemmer_batch(0),
        "PyStemmer stemWord per word (default cache)": pystemmer_words(),
        "snowballstemmer stemWords per title (pure Python)": lambda: [pure.stemWords(t) for t in data],
    }
    for name, fn in cases.items():
        results[name] = n_words / _best(fn, args.repeat)

    c_stems = [Stemmer.Stemmer("english").stemWords(t) for t in data]
    p_stems = [pure.stemWords(t) for t in data]
    differ = sum(a != b for ta, tb in zip(c_stems, p_stems) for a, b in zip(ta, tb))

    print(f"{args.titles:,} titles, {n_words:,} words, best of {args.repeat}")
    for name, rate in results.items():
        print(f"  {name:52s} {rate:12,.0f} words/s")
    print(f"  stems that differ between the two: {differ}")


if __name__ == "__main__":
    main()
