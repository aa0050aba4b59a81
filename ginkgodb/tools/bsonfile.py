"""Files of BSON documents back to back (`<coll>.bson`, gzipped or not), read in batches.

Each document's length prefix and trailing NUL are checked as it is cut out of the stream, so a
truncated or corrupt file stops with its name and the byte offset of the bad document; the
documents themselves stay bytes (they are inserted as RawBSONDocument, never decoded here).
"""
from __future__ import annotations

import gzip
import os
import struct
import zlib
from collections.abc import Iterator
from typing import BinaryIO, Optional

from .archive import MAX_BSON_SIZE
from .log import ToolError

_CHUNK = 1 << 20
_LENGTH = struct.Struct("<I")
#: documents of one insert batch of restore and import: a batch of 1000 spent a sixth of a
#: restore's CPU time on the per-batch work of the command and its write transaction
BATCH_DOCUMENTS = 5000
#: and at most this many bytes of them (a batch of large documents stays small in memory)
BATCH_BYTES = 16 * 1024 * 1024
#: documents of the first batch of a restore planned by `spans`
RAMP_FIRST = 500


def open_input(path: str, gzipped: bool) -> BinaryIO:
    try:
        raw = open(path, "rb")
    except OSError as exc:
        raise ToolError(f"error opening file {path!r}: {exc.strerror}") from None
    return gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw  # type: ignore[return-value]


def _framing_error(name: str, offset: int, buf: bytes, pos: int) -> ToolError:
    """What is wrong with the document whose length prefix is at `pos` of `buf`."""
    length = _LENGTH.unpack_from(buf, pos)[0]
    if length < 5 or length > MAX_BSON_SIZE:
        return ToolError(f"{name}: offset {offset}: invalid BSON document length {length} (a "
                         f"document is 5 to {MAX_BSON_SIZE} bytes)")
    return ToolError(f"{name}: offset {offset}: corrupt BSON document (its {length} bytes do not "
                     "end with a NUL byte)")


def _walk(stream: BinaryIO, name: str, size: int, keep: bool,
          max_bytes: int = BATCH_BYTES) -> Iterator[tuple[list, int]]:
    """(documents as bytes, or [] when not `keep`; how many) per at most `size` documents
    (and, when keeping them, about `max_bytes`: a batch ends with the document passing it)."""
    for docs, n, _ in _walk_spans(stream, name, size, keep, max_bytes if keep else 1 << 62):
        yield docs, n


def _walk_spans(stream: BinaryIO, name: str, size: int, keep: bool, max_bytes: int = BATCH_BYTES,
                first: Optional[int] = None) -> Iterator[tuple[list, int, int]]:
    """`_walk`'s batches, each with the offset in the stream where it ends; the first batch
    holds at most `first` documents when given (then each one twice the last, up to `size`)."""
    buf = b""
    pos = 0
    base = 0
    out: list = []
    n = 0
    nbytes = 0
    limit = size if first is None else min(first, size)
    unpack = _LENGTH.unpack_from
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
            length = unpack(buf, pos)[0]
            stop = pos + length
            if length < 5 or length > MAX_BSON_SIZE or (stop <= end and buf[stop - 1]):
                raise _framing_error(name, base + pos, buf, pos)
            if stop > end:
                break
            if keep:
                out.append(buf[pos:stop])
            pos = stop
            n += 1
            nbytes += length
            if n >= limit or nbytes >= max_bytes:
                yield out, n, base + pos
                out, n, nbytes = [], 0, 0
                limit = min(2 * limit, size)
        if not chunk:
            if pos < end:
                raise ToolError(f"{name}: offset {base + pos}: unexpected end of file inside a "
                                f"BSON document ({end - pos} bytes left over)")
            break
    if n:
        yield out, n, base + pos


def batches(stream: BinaryIO, name: str, size: int = 1000,
            max_bytes: int = BATCH_BYTES) -> Iterator[list]:
    """Lists of at most `size` documents (bytes) from `stream`, of about `max_bytes` at most."""
    for docs, _ in _walk(stream, name, size, True, max_bytes):
        yield docs


def count(stream: BinaryIO, name: str) -> int:
    """How many documents `stream` holds, every one's framing checked (nothing kept)."""
    return sum(n for _, n in _walk(stream, name, 1 << 30, False))


def spans(stream: BinaryIO, name: str, size: int, max_bytes: int = BATCH_BYTES,
          first: int = RAMP_FIRST) -> list[tuple[int, int, int]]:
    """The batches of `stream` as (start offset, end offset, documents), every document's
    framing checked: cut as `batches` cuts them (at most `size` documents, about `max_bytes`),
    except that the first holds at most `first` and each next one twice the last up to `size`
    (the inserting process waits for the first batch's check alone: a small one starts it
    sooner). Read again with `read_span`."""
    out = []
    start = 0
    for _, n, stop in _walk_spans(stream, name, size, False, max_bytes, first):
        out.append((start, stop, n))
        start = stop
    return out


def read_span(path: str, start: int, stop: int) -> list[bytes]:
    """The documents of one span of an uncompressed file `spans` has checked (cut without
    checking their framing again: the file is expected not to change between the two reads;
    a document that did is still refused by the insert's own checks)."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(stop - start)
    if len(data) != stop - start:
        raise ToolError(f"{path}: the file changed while it was restored (shorter than checked)")
    out = []
    unpack = _LENGTH.unpack_from
    pos, end = 0, len(data)
    while pos < end:
        length = unpack(data, pos)[0]
        if length < 5 or pos + length > end:
            raise ToolError(f"{path}: offset {start + pos}: the file changed while it was restored")
        out.append(data[pos:pos + length])
        pos += length
    return out


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
