"""Progress of long work: a tqdm bar on a terminal, plain log lines otherwise.

tqdm rather than rich: one small pure-Python dependency that imports in a few milliseconds
(rich.progress pulls in markdown and pygments), and it draws several bars at once, which parallel
collections need. When stderr is not a terminal (a pipe, a file, CI) no bar is drawn; a line with
the count, the rate and the estimated time left is logged at most every `interval` seconds.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Optional

from .log import Log

_positions_lock = threading.Lock()
_positions: set[int] = set()


def _take_position() -> int:
    with _positions_lock:
        pos = 0
        while pos in _positions:
            pos += 1
        _positions.add(pos)
        return pos


def _free_position(pos: int) -> None:
    with _positions_lock:
        _positions.discard(pos)


class Progress:
    """Counts units (documents) of one job; `total` may be None when it is not known."""

    interval = 1.0   # seconds between plain progress lines

    def __init__(self, log: Log, label: str, total: Optional[int], unit: str = "docs") -> None:
        self.log, self.label, self.total, self.unit = log, label, total, unit
        self.done = 0
        self._start = time.monotonic()
        self._last_line = self._start
        self._bar: Any = None
        self._pos = -1
        if log.interactive:
            from tqdm import tqdm
            self._pos = _take_position()
            self._bar = tqdm(total=total, desc=label, unit=unit, unit_scale=True,
                             file=log.stream, position=self._pos, leave=False,
                             dynamic_ncols=True, mininterval=0.2)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def advance(self, n: int) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
            return
        now = time.monotonic()
        if now - self._last_line >= self.interval and not self.log.quiet:
            self._last_line = now
            self.log.always(self.line(now))

    def line(self, now: Optional[float] = None) -> str:
        """`label  done/total unit (pct), rate unit/s, ETA`: what a plain progress line says."""
        elapsed = max((now or time.monotonic()) - self._start, 1e-9)
        rate = self.done / elapsed
        if self.total:
            pct = 100.0 * self.done / self.total
            left = (self.total - self.done) / rate if rate > 0 else float("inf")
            eta = f", ETA {left:.0f}s" if left != float("inf") else ""
            return (f"[{pct:5.1f}%] {self.label}  {self.done}/{self.total} {self.unit}, "
                    f"{rate:,.0f} {self.unit}/s{eta}")
        return f"{self.label}  {self.done} {self.unit}, {rate:,.0f} {self.unit}/s"

    @property
    def rate(self) -> float:
        return self.done / max(time.monotonic() - self._start, 1e-9)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            _free_position(self._pos)
