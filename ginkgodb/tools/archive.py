"""mongodump's archive format (`--archive`), written and read as mongo-tools 100.x do.

    archive   = magic (0x8199e26d, little-endian) header-doc collection-metadata-doc* terminator
                block*
    block     = namespace-header doc+ terminator          (a segment of one collection's data)
              | eof-header terminator                     (that collection is complete)
    terminator = ff ff ff ff

The header is `{concurrent_collections, version: "0.1", server_version, tool_version}`; each
collection-metadata document is `{db, collection, metadata: <metadata.json text>, size, type}`;
a namespace header is `{db, collection, EOF: false, CRC: 0}` and an EOF header carries `EOF: true`
and the CRC-64 (ECMA polynomial, as Go's hash/crc64) of all that namespace's document bytes.
Segments of several collections may interleave. The oplog is the namespace `("", "oplog")`.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO, Optional

import anycrc
import bson

from .log import ToolError

MAGIC = 0x8199E26D
MAGIC_BYTES = struct.pack("<I", MAGIC)
TERMINATOR = b"\xff\xff\xff\xff"
FORMAT_VERSION = "0.1"
MAX_BSON_SIZE = 16 * 1024 * 1024
_MIN_BSON_SIZE = 5
_CRC = anycrc.Model("CRC64-XZ")   # Go's crc64.MakeTable(crc64.ECMA) with its ^crc in and out
_U64 = 1 << 64
unpack = struct.Struct("<I").unpack_from


def crc64(data, crc: int = 0) -> int:
    """CRC-64-ECMA as Go computes it; `crc` continues a running checksum."""
    return _CRC.calc(data, crc) if crc else _CRC.calc(data)


def _signed(value: int) -> int:
    return value - _U64 if value >= 1 << 63 else value


@dataclass
class CollectionMetadata:
    db: str
    collection: str
    metadata: str = ""     # the metadata.json text (canonical Extended JSON), "" when none
    size: int = 0
    type: str = ""         # "", "collection", "view" or "timeseries"


@dataclass
class Prelude:
    header: dict
    collections: list[CollectionMetadata] = field(default_factory=list)


# ----------------------------------------------------------------------------------- writing
class ArchiveWriter:
    """Writes an archive to a binary stream; one namespace segment per `write` run."""

    def __init__(self, stream: BinaryIO) -> None:
        self._out = stream
        self._current: Optional[tuple[str, str]] = None
        self._crc: dict[tuple[str, str], int] = {}

    def prelude(self, server_version: str, tool_version: str, concurrent: int,
                collections: list[CollectionMetadata]) -> None:
        out = self._out
        out.write(MAGIC_BYTES)
        out.write(bson.encode({"concurrent_collections": concurrent, "version": FORMAT_VERSION,
                               "server_version": server_version, "tool_version": tool_version}))
        for meta in collections:
            out.write(bson.encode({"db": meta.db, "collection": meta.collection,
                                   "metadata": meta.metadata, "size": meta.size,
                                   "type": meta.type}))
        out.write(TERMINATOR)

    def write(self, db: str, collection: str, documents: bytes) -> None:
        """Documents (BSON back to back) of one namespace, in a segment of their own if needed."""
        if not documents:
            return
        ns = (db, collection)
        if self._current != ns:
            if self._current is not None:
                self._out.write(TERMINATOR)
            self._out.write(_namespace_header(db, collection, False, 0))
            self._current = ns
        self._out.write(documents)
        self._crc[ns] = crc64(documents, self._crc.get(ns, 0))

    def end(self, db: str, collection: str) -> None:
        """The namespace is complete: its EOF block with the CRC of everything written."""
        if self._current is not None:
            self._out.write(TERMINATOR)
        crc = self._crc.pop((db, collection), 0)
        self._out.write(_namespace_header(db, collection, True, crc))
        self._out.write(TERMINATOR)
        self._current = None


def _namespace_header(db: str, collection: str, eof: bool, crc: int) -> bytes:
    return bson.encode({"db": db, "collection": collection, "EOF": eof,
                        "CRC": bson.Int64(_signed(crc))})


# ----------------------------------------------------------------------------------- reading
@dataclass
class Segment:
    """Documents of one namespace read from the archive (`docs` are BSON bytes), or its EOF."""
    db: str
    collection: str
    docs: list
    eof: bool = False
    #: where the documents are in the (uncompressed) stream: bytes start to stop, back to back
    start: int = 0
    stop: int = 0


class ArchiveReader:
    """Reads an archive from a binary stream, checking its structure and every CRC.

    Errors name the archive and the byte offset (of the uncompressed stream) where the problem is.
    """

    _CHUNK = 1 << 20

    def __init__(self, stream: BinaryIO, name: str, batch: int = 1000,
                 first: Optional[int] = None) -> None:
        self._in = stream
        self.name = name
        self._batch = batch
        #: documents of the first segment when given, each next one twice the last up to
        #: `batch` (a restore's inserts wait for the first one's check alone)
        self._first = batch if first is None else max(1, min(first, batch))
        self._buf = b""
        self._pos = 0
        self._base = 0          # stream offset of self._buf[0]
        self._eof = False
        self.prelude: Optional[Prelude] = None

    # -- low level ---------------------------------------------------------------------------
    @property
    def offset(self) -> int:
        return self._base + self._pos

    def fail(self, message: str, offset: Optional[int] = None) -> ToolError:
        at = self.offset if offset is None else offset
        return ToolError(f"{self.name}: offset {at}: corruption found in archive; {message}")

    def _fill(self, need: int) -> bool:
        """Make `need` bytes available at self._pos; False at a clean end of stream."""
        while len(self._buf) - self._pos < need:
            if self._eof:
                return False
            try:
                chunk = self._in.read(max(self._CHUNK, need))
            except (OSError, EOFError) as exc:
                raise self.fail(f"I/O error reading archive ({exc})") from None
            if not chunk:
                self._eof = True
                continue
            self._base += self._pos
            self._buf = self._buf[self._pos:] + chunk
            self._pos = 0
        return True

    def _next(self) -> Optional[bytes]:
        """The next BSON document, TERMINATOR, or None at the end of the stream."""
        start = self.offset
        if not self._fill(4):
            if len(self._buf) - self._pos:
                raise self.fail("I/O error reading length or terminator (unexpected end of "
                                "archive)", start)
            return None
        pos = self._pos
        buf = self._buf
        if buf[pos:pos + 4] == TERMINATOR:
            self._pos = pos + 4
            return TERMINATOR
        size = int.from_bytes(buf[pos:pos + 4], "little")
        if size < _MIN_BSON_SIZE or size > MAX_BSON_SIZE:
            raise self.fail(f"{size} is neither a valid bson length nor a archive terminator", start)
        if not self._fill(size):
            raise self.fail(f"read bson: unexpected end of archive inside a {size}-byte document",
                            start)
        pos = self._pos
        doc = self._buf[pos:pos + size]
        if doc[-1] != 0:
            raise self.fail(f"bson (size: {size}, byte: {doc[-1]}) doesn't end with a null byte",
                            start)
        self._pos = pos + size
        return doc

    def _decode(self, doc: bytes, what: str, offset: int) -> dict:
        try:
            return bson.decode(doc)
        except Exception as exc:       # InvalidBSON and the codec's other complaints
            raise self.fail(f"{what} is not valid BSON ({exc})", offset) from None

    # -- structure -----------------------------------------------------------------------------
    def read_prelude(self) -> Prelude:
        if not self._fill(4) or self._buf[:4] != MAGIC_BYTES:
            head = self._buf[:2]
            hint = " (it is gzip-compressed: add --gzip)" if head == b"\x1f\x8b" else ""
            raise ToolError(f"{self.name}: stream or file does not appear to be a mongodump "
                            f"archive{hint}")
        self._pos = 4
        at = self.offset
        header = self._next()
        if header is None or header == TERMINATOR:
            raise self.fail("the archive has no header", at)
        header_doc = self._decode(header, "the archive header", at)
        version = header_doc.get("version")
        if version != FORMAT_VERSION:
            raise self.fail(f"unsupported archive format version {version!r} (expected "
                            f"{FORMAT_VERSION!r})", at)
        prelude = Prelude(header=header_doc)
        while True:
            at = self.offset
            doc = self._next()
            if doc is None:
                raise self.fail("the archive ends inside its prelude", at)
            if doc == TERMINATOR:
                break
            meta = self._decode(doc, "a collection metadata document", at)
            try:
                prelude.collections.append(CollectionMetadata(
                    db=_str(meta, "db"), collection=_str(meta, "collection"),
                    metadata=_str(meta, "metadata", ""), size=int(meta.get("size", 0)),
                    type=_str(meta, "type", "")))
            except (TypeError, ValueError) as exc:
                raise self.fail(f"bad collection metadata: {exc}", at) from None
        self.prelude = prelude
        return prelude

    def segments(self) -> Iterator[Segment]:
        """Document batches (at most `batch` each) and EOF markers, in archive order."""
        if self.prelude is None:
            self.read_prelude()
        state: dict[tuple[str, str], int] = {}     # namespace -> running CRC while open
        closed: set[tuple[str, str]] = set()
        batch = self._first
        while True:
            at = self.offset
            doc = self._next()
            if doc is None:
                break
            if doc == TERMINATOR:
                raise self.fail("consecutive terminators / headerless blocks are not allowed", at)
            header = self._decode(doc, "a namespace header", at)
            db, coll, eof, crc = self._namespace_header(header, at)
            ns = (db, coll)
            if ns in closed:
                raise self.fail(f"namespace header for already closed namespace `{db}.{coll}`", at)
            if eof:
                end = self._next()
                if end != TERMINATOR:
                    raise self.fail(f"EOF header for `{db}.{coll}` is not followed by a "
                                    "terminator", at)
                mine = state.pop(ns, 0)
                if mine != crc:
                    raise self.fail(f"CRC mismatch for namespace `{db}.{coll}`, {mine}!={crc}", at)
                closed.add(ns)
                yield Segment(db, coll, [], eof=True)
                continue
            running = state.get(ns, 0)
            docs: list = []
            start = self.offset
            while True:
                # the documents already in the buffer, cut out in one tight loop and their CRC
                # taken in one call (a running CRC over parts is the CRC of the whole); the
                # first one that is not plainly whole (a refill, the terminator, a bad length)
                # goes through _next, which says what is wrong
                buf, pos = self._buf, self._pos
                end, first, room = len(buf), pos, batch - len(docs)
                while end - pos >= 4 and room:
                    size = unpack(buf, pos)[0]
                    stop = pos + size
                    if size < _MIN_BSON_SIZE or size > MAX_BSON_SIZE or stop > end or buf[stop - 1]:
                        break
                    docs.append(buf[pos:stop])
                    pos = stop
                    room -= 1
                if pos > first:
                    running = crc64(memoryview(buf)[first:pos], running)
                    self._pos = pos
                if not room:
                    state[ns] = running
                    yield Segment(db, coll, docs, start=start, stop=self.offset)
                    docs, start = [], self.offset
                    batch = min(2 * batch, self._batch)
                    continue
                at = self.offset
                doc = self._next()
                if doc is None:
                    raise self.fail(f"the archive ends inside a segment of `{db}.{coll}`", at)
                if doc == TERMINATOR:
                    break
                running = crc64(doc, running)
                docs.append(doc)
                if len(docs) >= batch:
                    state[ns] = running
                    yield Segment(db, coll, docs, start=start, stop=self.offset)
                    docs, start = [], self.offset
                    batch = min(2 * batch, self._batch)
            state[ns] = running
            if docs:
                yield Segment(db, coll, docs, start=start, stop=at)
                batch = min(2 * batch, self._batch)
        if state:
            names = ", ".join(f"`{d}.{c}`" for d, c in state)
            raise self.fail(f"archive finished but contained files were unfinished ({names})")
        expected = {(m.db, m.collection) for m in self.prelude.collections
                    if m.type != "view"} if self.prelude else set()
        missing = sorted(expected - closed)
        if missing:
            d, c = missing[0]
            raise self.fail(f"archive finished before all collections were seen (`{d}.{c}`)")

    def _namespace_header(self, header: dict, at: int) -> tuple[str, str, bool, int]:
        unknown = set(header) - {"db", "collection", "EOF", "CRC"}
        if unknown:
            raise self.fail(f"unknown field `{sorted(unknown)[0]}` in a namespace header", at)
        try:
            db = _str(header, "db", "")
            coll = _str(header, "collection")
        except (TypeError, ValueError) as exc:
            raise self.fail(f"bad namespace header: {exc}", at) from None
        if not coll:
            raise self.fail("collection header is missing a Collection", at)
        eof = header.get("EOF", False)
        if not isinstance(eof, bool):
            raise self.fail("`EOF` of a namespace header must be a boolean", at)
        crc = header.get("CRC", 0)
        if not isinstance(crc, int) or isinstance(crc, bool):
            raise self.fail("`CRC` of a namespace header must be a 64-bit integer", at)
        return db, coll, eof, crc % _U64


def _str(doc: dict, key: str, default: Optional[str] = None) -> str:
    if key not in doc:
        if default is None:
            raise ValueError(f"missing `{key}`")
        return default
    value = doc[key]
    if not isinstance(value, str):
        raise TypeError(f"`{key}` must be a string")
    return value
