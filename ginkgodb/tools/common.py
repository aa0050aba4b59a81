"""Pieces every tool shares: verbosity flags, the failure convention, output files."""
from __future__ import annotations

import argparse
import gzip
import os
import sys
import urllib.parse
from collections.abc import Callable
from typing import Any, BinaryIO

from .log import Log, ToolError

GZIP_LEVEL = 6   # Go's gzip.DefaultCompression, what mongodump writes


def add_verbosity_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("verbosity options")
    group.add_argument("-v", "--verbose", action="count", default=0,
                       help="more detailed log output (repeat for more: -vv)")
    group.add_argument("--quiet", action="store_true",
                       help="hide all log output but errors (no progress either)")


def make_log(args: argparse.Namespace) -> Log:
    return Log(quiet=args.quiet, verbosity=args.verbose)


def run_tool(body: Callable[[argparse.Namespace, Log], int], args: argparse.Namespace) -> int:
    """Run a tool's body; a ToolError becomes `Failed: <message>` on stderr and exit code 1."""
    log = make_log(args)
    try:
        return body(args, log)
    except ToolError as exc:
        log.error(f"Failed: {exc}")
        return 1
    except KeyboardInterrupt:
        log.error("Failed: interrupted")
        return 1
    except BrokenPipeError:
        # the reader of our stdout went away (`| head`): stop quietly, as a Unix tool does
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 1


def escape_collection(name: str) -> str:
    """A collection name as mongodump spells it in file names (URL query escaping)."""
    return urllib.parse.quote_plus(name, safe="")


def unescape_collection(name: str) -> str:
    return urllib.parse.unquote_plus(name)


def open_output(path: str, gzipped: bool) -> BinaryIO:
    try:
        raw = open(path, "wb")
    except OSError as exc:
        raise ToolError(f"error creating file {path!r}: {exc.strerror}") from None
    if gzipped:
        return gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=GZIP_LEVEL, mtime=0)  # type: ignore[return-value]
    return raw


def close_output(stream: Any) -> None:
    """Close a stream from open_output (a GzipFile leaves its file open)."""
    inner = getattr(stream, "fileobj", None)
    stream.close()
    if inner is not None:
        inner.close()


def doc_count(data: bytes) -> int:
    """How many BSON documents are back to back in `data` (lengths only, no decoding)."""
    n = pos = 0
    end = len(data)
    while pos < end:
        pos += int.from_bytes(data[pos:pos + 4], "little")
        n += 1
    return n
