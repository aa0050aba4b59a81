"""Files of BSON documents back to back (`<coll>.bson`, gzipped or not), read in batches.

Each document's length prefix and trailing NUL are checked as it is cut out of the stream, so a
truncated or corrupt file stops with its name and the byte offset of the bad document; the
documents themselves stay bytes (they are inserted as RawBSONDocument, never decoded here).
"""
from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator
from typing import BinaryIO

from .archive import MAX_BSON_SIZE
from .log import ToolError

_CHUNK = 1 << 20


def open_input(path: str, gzipped: bool) -> BinaryIO:
    try:
        raw = open(path, "rb")
    except OSError as exc:
        raise ToolError(f"error opening file {path!r}: {exc.strerror}") from None
    return gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw  # type: ignore[return-value]


def batches(stream: BinaryIO, name: str, size: int = 1000) -> Iterator[list]:
    """Lists of at most `size` documents (bytes) from `stream`."""
    buf = b""
    pos = 0
    base = 0
    out: list = []
    while True:
        try:
            chunk = stream.read(_CHUNK)
        except (OSError, EOFError, zlib.error) as exc:
            raise ToolError(f"{name}: offset {base + pos}: error reading input ({exc})") from None
        if chunk:
            base += pos
            buf = buf[pos:] + chunk if pos < len(buf) else chunk
            pos = 0
        end = len(buf)
        while end - pos >= 4:
            length = int.from_bytes(buf[pos:pos + 4], "little")
            if length < 5 or length > MAX_BSON_SIZE:
                raise ToolError(f"{name}: offset {base + pos}: invalid BSON document length "
                                f"{length} (a document is 5 to {MAX_BSON_SIZE} bytes)")
            if end - pos < length:
                break
            if buf[pos + length - 1] != 0:
                raise ToolError(f"{name}: offset {base + pos}: corrupt BSON document (its "
                                f"{length} bytes do not end with a NUL byte)")
            out.append(buf[pos:pos + length])
            pos += length
            if len(out) >= size:
                yield out
                out = []
        if not chunk:
            if pos < end:
                raise ToolError(f"{name}: offset {base + pos}: unexpected end of file inside a "
                                f"BSON document ({end - pos} bytes left over)")
            break
    if out:
        yield out


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
