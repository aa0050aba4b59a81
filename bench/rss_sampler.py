"""Peak anonymous and file-backed resident memory of this process, sampled on a thread.

`ru_maxrss` adds both: the Python heap (anonymous pages) and the pages of memory-mapped files
(LMDB's data file: the kernel's page cache, shared and reclaimable). A database using mmap shows
its whole working set in RSS, so the benchmark reports the two apart (Linux /proc; elsewhere
the peaks stay None)."""
from __future__ import annotations

import threading
from typing import Optional

INTERVAL = 0.05  # seconds between samples: a spike shorter than this can be missed


def rss_split() -> Optional[tuple[int, int]]:
    """(RssAnon, RssFile) of this process in bytes, None where /proc cannot tell."""
    anon = file = None
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    anon = int(line.split()[1]) * 1024
                elif line.startswith("RssFile:"):
                    file = int(line.split()[1]) * 1024
    except OSError:
        return None
    return (anon, file) if anon is not None and file is not None else None


class RssSampler:
    """`with RssSampler() as s: ...` then `s.peak_anon`, `s.peak_file` (bytes, or None)."""

    def __init__(self) -> None:
        self.peak_anon: Optional[int] = None
        self.peak_file: Optional[int] = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="rss-sampler")

    def _take(self) -> bool:
        got = rss_split()
        if got is None:
            return False
        self.peak_anon = max(self.peak_anon or 0, got[0])
        self.peak_file = max(self.peak_file or 0, got[1])
        return True

    def _run(self) -> None:
        while self._take() and not self._stop.wait(INTERVAL):
            pass

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._take()
