"""Python's `re`, the `regex` package and `google-re2` on mongod-style patterns.

    python -m bench.regex_engines            # google-re2 is measured when it is installed

Prints microseconds per search over 100,000 short strings for each engine (and for `regex` with
`concurrent=True` and a timeout, as ginkgodb runs it), compile cost, the catastrophic-backtracking
cases, and which PCRE features each engine accepts. The measurement behind the choice of
`regex` in `ginkgodb/query/pcre.py`.
"""
from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any

import regex

try:
    import re2  # type: ignore[import-not-found]
except ImportError:  # optional: pip install google-re2
    re2 = None

STRINGS = [f"user{i:06d}@example.com ABC-{i % 1000:03d} Hello World" for i in range(100_000)]
PATTERNS = [("^user0001", ""), ("^USER0001", "i"), ("example\\.com$", ""), ("\\d{3} Hello", ""),
            ("abc-9\\d\\d", "i"), ("(foo|bar|world)", "i")]
FEATURES = [("\\p{Lu}", "\u00c4"), ("(?<=a|bc)d", "bcd"), ("(?>a+)b", "aab"), ("a++b", "aab"),
            ("(a)\\1", "aa"), ("(?=x)x", "x")]


def _per_search(compile_: Callable[[str, str], Any], search: Callable[[Any, str], Any]) -> list[float]:
    out = []
    for pattern, options in PATTERNS:
        rx = compile_(pattern, options)
        started = time.perf_counter()
        for s in STRINGS:
            search(rx, s)
        out.append((time.perf_counter() - started) * 1e6 / len(STRINGS))
    return out


def _engines() -> list[tuple[str, Callable, Callable]]:
    def rx(p: str, o: str) -> Any:
        return regex.compile(p, regex.VERSION0 | (regex.I if o else 0))
    engines = [
        ("re", lambda p, o: re.compile(p, re.I if o else 0), lambda r, s: r.search(s)),
        ("regex", rx, lambda r, s: r.search(s)),
        ("regex concurrent", rx, lambda r, s: r.search(s, concurrent=True)),
        ("regex concurrent+timeout", rx, lambda r, s: r.search(s, concurrent=True, timeout=3.0)),
    ]
    if re2 is not None:
        engines.append(("google-re2", lambda p, o: re2.compile(("(?i)" if o else "") + p),
                        lambda r, s: r.search(s)))
    return engines


def _redos() -> None:
    cases = [("(a+)+$", "a" * 25 + "b"), ("(a|a)+b", "a" * 30)]
    for pattern, s in cases:
        started = time.perf_counter()
        if pattern == "(a+)+$":  # exponential for `re` too; the other would not end
            re.search(pattern, s)
            print(f"  re     {pattern!r} on {len(s)} chars: {time.perf_counter() - started:.3f} s")
        started = time.perf_counter()
        try:
            regex.search(pattern, s, concurrent=True, timeout=0.5)
            outcome = "finished"
        except TimeoutError:
            outcome = "timed out (0.5 s)"
        print(f"  regex  {pattern!r} on {len(s)} chars: {time.perf_counter() - started:.3f} s, {outcome}")
        if re2 is not None:
            started = time.perf_counter()
            re2.search(pattern, s)
            print(f"  re2    {pattern!r} on {len(s)} chars: {time.perf_counter() - started:.6f} s")


def _lock_release() -> None:
    """How long another thread waits while a catastrophic match runs."""
    for concurrent in (False, True):
        done = threading.Event()

        def match(flag: bool = concurrent, done: threading.Event = done) -> None:
            try:
                regex.search("(a|a)+b", "a" * 40, concurrent=flag, timeout=0.5)
            except TimeoutError:
                pass
            done.set()
        worker = threading.Thread(target=match)
        gaps, last = [], time.perf_counter()
        worker.start()
        while not done.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
        worker.join()
        print(f"  concurrent={concurrent}: the other thread ran {len(gaps)} times, "
              f"longest wait {max(gaps) * 1000:.0f} ms")


def main() -> None:
    print("us per search:", ", ".join(f"{p!r}{'/i' if o else ''}" for p, o in PATTERNS))
    for name, compile_, search in _engines():
        print(f"  {name:26s}", " ".join(f"{v:6.2f}" for v in _per_search(compile_, search)))
    print("compile, us per pattern:")
    for name, compile_, _ in _engines()[:2] + _engines()[4:]:
        started = time.perf_counter()
        for i in range(2000):
            compile_(f"^user{i}x.*y[0-9]+", "")
        print(f"  {name:26s} {(time.perf_counter() - started) / 2000 * 1e6:7.1f}")
    print("catastrophic backtracking:")
    _redos()
    print("another thread during a catastrophic match:")
    _lock_release()
    print("PCRE features (pattern: re / regex / re2):")
    for pattern, s in FEATURES:
        row = []
        for mod in (re, regex, re2):
            if mod is None:
                continue
            try:
                row.append("yes" if mod.search(pattern, s) else "no match")
            except Exception:  # each engine refuses in its own way
                row.append("refused")
        print(f"  {pattern:12s}", " / ".join(row))


if __name__ == "__main__":
    main()
