"""Log lines as MongoDB's tools write them: `<timestamp>\\t<message>` on stderr.

`--quiet` keeps only errors; `-v` adds informational lines, `-vv` debugging ones. Results a
user asked for (exported documents, stat rows) go to stdout and are never mixed with these.
"""
from __future__ import annotations

import datetime as dt
import sys
import threading
from typing import Optional, TextIO


class ToolError(Exception):
    """A failure the tool reports as `Failed: <message>` and exits 1 on."""


class Log:
    """Leveled log lines; thread safe (parallel collections write through one Log)."""

    def __init__(self, quiet: bool = False, verbosity: int = 0,
                 stream: Optional[TextIO] = None) -> None:
        self.quiet = quiet
        self.verbosity = verbosity
        self.stream = stream if stream is not None else sys.stderr
        self._lock = threading.Lock()

    def _write(self, message: str) -> None:
        stamp = dt.datetime.now().astimezone().strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
        offset = dt.datetime.now().astimezone().strftime("%z")
        with self._lock:
            self.stream.write(f"{stamp}{offset}\t{message}\n")
            self.stream.flush()

    def always(self, message: str) -> None:
        """What mongo tools log at their default level (progress, per-collection results)."""
        if not self.quiet:
            self._write(message)

    def info(self, message: str) -> None:
        if not self.quiet and self.verbosity >= 1:
            self._write(message)

    def debug(self, message: str) -> None:
        if not self.quiet and self.verbosity >= 2:
            self._write(message)

    def error(self, message: str) -> None:
        """Shown even with --quiet."""
        self._write(message)

    @property
    def interactive(self) -> bool:
        """Whether progress may be drawn as a bar (a terminal, and not --quiet)."""
        isatty = getattr(self.stream, "isatty", None)
        return not self.quiet and bool(isatty and isatty())


def plural(n: int, word: str, words: Optional[str] = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"
