"""`ginkgodb import`: Extended JSON or CSV/TSV into one collection (mongoimport).

JSON input is a stream of documents, normally one per line (a document may also span lines, as
`--pretty` output does); `--jsonArray` reads one array. Each document goes from text to BSON in
C (libbson through python-bsonjs) and is written as RawBSONDocument in batches of 5,000. On a
machine with two cores or more, whole-line documents are parsed in worker processes, one per
core up to three (and, for an insert into a data directory, checked there for the engine,
bsonutil.checked) while the previous batch is written; a document spanning lines is parsed
here, in input order. The parse is the costlier step (twice the insert's CPU time): with two
workers it is spread over both cores.

Bad input: a line that does not parse is reported as `<file>:<line>: <problem>` and counted as
a failure; the rest is imported and the counts are printed at the end (exit code 1 when any
input was rejected). With `--stopOnError` the whole input is parsed before anything is written,
so a malformed file stops the import with nothing imported. Duplicate keys and validation
failures are continued through (and counted) unless `--stopOnError`; other write errors stop.

Modes: `insert` (default), `upsert` (replace the document matching `--upsertFields`, default
`_id`, or insert it), `merge` (`$set` its fields into the match, or insert it), `delete` (delete
one match). A document missing every upsert field is inserted (upsert, merge) or skipped
(delete), as mongoimport does.
"""
from __future__ import annotations

import argparse
import csv
import io
import os
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from typing import Any, BinaryIO, Optional

import bson
import bsonjs
import orjson
from bson.raw_bson import RawBSONDocument

from ..bsonutil.checked import check_one, checked
from . import bsonfile, collector, csvfields
from .connect import connect
from .extjson import json_to_bson
from .log import Log, ToolError
from .parallel import Workers, workers_for
from .progress import Progress

#: lines handed to a worker process at a time (JSON input parsed beside the inserts)
PARSE_CHUNK = 5000
#: lines of the first chunk
PARSE_FIRST = 500
#: parse workers, at most (one per core below that): a document's parse and check cost about
#: twice its insert here, so past three they would wait on this process
PARSE_WORKERS = 3

IGNORABLE_CODES = {11000, 11001, 12582, 121}
_MAX_DOC_TEXT = 64 * 1024 * 1024


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-d", "--db", default="test", help="database (default %(default)s)")
    parser.add_argument("-c", "--collection",
                        help="collection (default: the input file's name without extension)")
    parser.add_argument("--file", help="input file (default: stdin)")
    parser.add_argument("--type", default="json", choices=["json", "csv", "tsv"],
                        help="input format (default %(default)s)")
    parser.add_argument("-f", "--fields", help="CSV/TSV: comma-separated field names")
    parser.add_argument("--fieldFile", metavar="FILE", help="CSV/TSV: one field name per line")
    parser.add_argument("--headerline", action="store_true",
                        help="CSV/TSV: the first line holds the field names")
    parser.add_argument("--columnsHaveTypes", action="store_true",
                        help="CSV/TSV: field names carry types, e.g. 'age.int32()', "
                             "'created.date(2006-01-02)', 'zip.string()'")
    parser.add_argument("--parseGrace", default="stop",
                        choices=["autoCast", "skipField", "skipRow", "stop"],
                        help="when a typed cell does not parse: guess its type, drop the field, "
                             "drop the row, or reject the row as malformed (default %(default)s)")
    parser.add_argument("--ignoreBlanks", action="store_true",
                        help="CSV/TSV: leave out fields whose cell is empty")
    parser.add_argument("--jsonArray", action="store_true", help="the input is one JSON array")
    parser.add_argument("--legacy", action="store_true",
                        help="accepted for mongoimport compatibility: legacy (v1) Extended JSON "
                             "is always understood")
    parser.add_argument("--mode", default="insert", choices=["insert", "upsert", "merge", "delete"],
                        help="what to do with each document (default %(default)s)")
    parser.add_argument("--upsertFields", metavar="FIELDS",
                        help="comma-separated fields that find a document's match (default _id)")
    parser.add_argument("--drop", action="store_true", help="drop the collection first")
    parser.add_argument("--stopOnError", action="store_true",
                        help="parse all input before writing, and stop at the first write error")
    parser.add_argument("--maintainInsertionOrder", action="store_true",
                        help="write in input order, one batch at a time; implies --stopOnError")
    parser.add_argument("-j", "--numInsertionWorkers", type=int, default=1, metavar="N",
                        help="write batches in flight (default %(default)s)")
    parser.add_argument("--bypassDocumentValidation", action="store_true",
                        help="write without checking the collection's validator")
    parser.add_argument("--batchSize", type=int, default=bsonfile.BATCH_DOCUMENTS, help=argparse.SUPPRESS)


@dataclass
class Counts:
    ok: int = 0
    failed: int = 0
    rejected: int = 0       # input that did not parse


def check_arguments(args: argparse.Namespace) -> None:
    tabular = args.type in ("csv", "tsv")
    if not tabular:
        for flag in ("headerline", "fields", "fieldFile", "ignoreBlanks", "columnsHaveTypes"):
            if getattr(args, flag):
                raise ToolError(f"cannot use --{flag} when input type is JSON")
    else:
        given = [f for f in ("fields", "fieldFile") if getattr(args, f)] + (
            ["headerline"] if args.headerline else [])
        if len(given) > 1:
            raise ToolError(f"incompatible options: --{given[0]} and --{given[1]}")
        if not given:
            raise ToolError("must specify --fields, --fieldFile or --headerline to import this "
                            "file type")
        if args.jsonArray:
            raise ToolError("cannot use --jsonArray with CSV/TSV input")
    if args.upsertFields and args.mode == "insert":
        raise ToolError("cannot use --upsertFields with --mode=insert")
    if args.numInsertionWorkers < 1 or args.batchSize < 1:
        raise ToolError("--numInsertionWorkers and --batchSize must be at least 1")
    if args.maintainInsertionOrder:
        args.stopOnError = True
        args.numInsertionWorkers = 1
    if not args.collection:
        if not args.file:
            raise ToolError("no collection specified: use --collection")
        args.collection = os.path.splitext(os.path.basename(args.file))[0]


# ------------------------------------------------------------------------------------- input
class BadInput(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _lines(stream: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(line number, line) pairs; a UTF-8 byte-order mark at the start is dropped."""
    first = True
    for number, line in enumerate(stream, 1):
        if first:
            first = False
            if line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]
        yield number, line


def parse_lines(job: tuple[list[bytes], bool]) -> tuple[list[Optional[bytes]], list[Optional[bytes]]]:
    """Per line, its BSON when the line holds one whole document, else None (for
    `json_documents`' general path); and its `_id` key when `with_keys` and plain. Two lists,
    not a pair per line: fewer objects to pickle here and rebuild in the tool's process. Runs in
    a worker process."""
    lines, with_keys = job
    loads = bsonjs.loads
    raws: list[Optional[bytes]] = []
    for line in lines:
        raw = None
        if line[:1] == b"{":
            try:
                raw = loads(line)
            except ValueError:
                raw = None      # incomplete or malformed: the general path below says which
        raws.append(raw)
    keys = [None if raw is None else check_one(raw) for raw in raws] if with_keys else [None] * len(raws)
    return raws, keys


def _line_chunks(stream: BinaryIO) -> Iterator[tuple[int, list[bytes]]]:
    """(number of the first line, up to PARSE_CHUNK lines), as `_lines` numbers and trims them.
    The first chunk is PARSE_FIRST lines and each next one twice the last: the inserts wait
    for the first chunk's parse alone, and a small one starts them sooner."""
    number = 1
    size = min(PARSE_FIRST, PARSE_CHUNK)
    while True:
        chunk = list(islice(stream, size))
        if not chunk:
            return
        if number == 1 and chunk[0].startswith(b"\xef\xbb\xbf"):
            chunk[0] = chunk[0][3:]
        yield number, chunk
        number += len(chunk)
        size = min(2 * size, PARSE_CHUNK)


@dataclass
class Run:
    """Consecutive whole-line documents a worker parsed (and keyed, or None each)."""
    line: int
    raws: list
    keys: list


class _Lines:
    """`json_documents`' general path, line by line: a line parsed by a worker, a line parsed
    here, or the lines of a document spanning several."""

    def __init__(self) -> None:
        self.pending: list[bytes] = []
        self.start = 0
        self.size = 0

    def feed(self, number: int, line: bytes, raw: Optional[bytes], key: Optional[bytes],
             parsed: bool) -> Iterator[tuple[int, Any, Optional[bytes]]]:
        pending = self.pending
        if not pending and raw is not None:     # parsed by a worker: one whole document
            yield number, raw, key
            return
        if not pending and not parsed and line[:1] == b"{":   # the common line, inline
            try:
                raw = bsonjs.loads(line)
            except ValueError:
                raw = None      # incomplete or malformed: the general path below says which
            if raw is not None:
                yield number, raw, None
                return
        if not pending:
            if not line.strip():
                return
            self.start = number
        pending.append(line)
        self.size += len(line)
        text = line if len(pending) == 1 else b"".join(pending)
        try:
            raw = json_to_bson(text)
        except ValueError as exc:
            if str(exc) == "Incomplete JSON" and self.size < _MAX_DOC_TEXT:
                return          # a document spanning lines: read on
            self.pending, self.size = [], 0
            yield self.start, BadInput(self.start, _json_problem(exc)), None
            return
        self.pending, self.size = [], 0
        yield self.start, raw, None

    def finish(self) -> Iterator[tuple[int, Any, Optional[bytes]]]:
        if self.pending:
            yield self.start, BadInput(self.start, "unexpected end of input inside a document"), None


def json_runs(stream: BinaryIO, workers: Optional[Workers] = None, with_keys: bool = False
              ) -> Iterator[tuple[int, Any, Optional[bytes]]]:
    """`json_documents`, except that a worker's chunk whose every line held one whole document
    (and came with no document still open) is one item, (first line, Run, None): the tool's
    process then handles it as a whole, not line by line."""
    lines = _Lines()
    if workers is None or not workers.n:
        for number, line in _lines(stream):
            yield from lines.feed(number, line, None, None, False)
        yield from lines.finish()
        return
    sent: deque = deque()

    def jobs() -> Iterator[tuple[list[bytes], bool]]:
        for number, chunk in _line_chunks(stream):
            sent.append((number, chunk))
            yield chunk, with_keys

    for raws, keys in workers.ordered_map(parse_lines, jobs()):
        number, chunk = sent.popleft()
        if not lines.pending and None not in raws:
            yield number, Run(number, raws, keys), None
            continue
        for i, (line, raw, key) in enumerate(zip(chunk, raws, keys)):
            yield from lines.feed(number + i, line, raw, key, True)
    yield from lines.finish()


def json_documents(stream: BinaryIO, workers: Optional[Workers] = None, with_keys: bool = False
                   ) -> Iterator[tuple[int, Any, Optional[bytes]]]:
    """(line, BSON bytes, `_id` key or None) per document, or (line, BadInput, None) for text
    that does not parse. With `workers`, whole-line documents are parsed (and with
    `with_keys` checked for the insert, bsonutil.checked) in worker processes; the documents
    and errors are the same."""
    for number, item, key in json_runs(stream, workers, with_keys):
        if type(item) is Run:
            yield from zip(range(number, number + len(item.raws)), item.raws, item.keys)
        else:
            yield number, item, key


def _json_problem(exc: ValueError) -> str:
    text = str(exc)
    return text if text.startswith(("expected", "empty")) else f"invalid JSON: {text}"


def json_array_documents(stream: BinaryIO) -> Iterator[tuple[int, Any]]:
    data = stream.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        values = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        yield exc.lineno, BadInput(exc.lineno, f"invalid JSON array: {exc.msg} (column "
                                               f"{exc.colno})")
        return
    if not isinstance(values, list):
        yield 1, BadInput(1, "expected a JSON array (--jsonArray)")
        return
    for i, value in enumerate(values):
        if not isinstance(value, dict):
            yield 1, BadInput(1, f"array element #{i} is not a document")
            continue
        try:
            yield i + 1, json_to_bson(orjson.dumps(value))
        except ValueError as exc:
            yield i + 1, BadInput(i + 1, f"array element #{i}: {_json_problem(exc)}")


def table_documents(stream: BinaryIO, args: argparse.Namespace) -> Iterator[tuple[int, Any]]:
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")
    if args.type == "csv":
        rows: Iterator = csv.reader(text, strict=True)
    else:
        rows = (line.rstrip("\r\n").split("\t") for line in text)
    names: Optional[list[str]] = None
    if args.fields:
        names = csvfields.split_fields(args.fields)
    elif args.fieldFile:
        try:
            with open(args.fieldFile, encoding="utf-8") as f:
                names = [line.strip() for line in f if line.strip()]
        except OSError as exc:
            raise ToolError(f"error reading fieldFile {args.fieldFile!r}: {exc.strerror}") from None
    cols = csvfields.columns(names, args.columnsHaveTypes) if names is not None else None
    line = 0
    while True:
        try:
            row = next(rows)
        except StopIteration:
            break
        except csv.Error as exc:
            line = getattr(rows, "line_num", line + 1)
            yield line, BadInput(line, f"CSV: {exc}")
            continue
        except UnicodeDecodeError as exc:
            yield line + 1, BadInput(line + 1, f"not UTF-8: {exc}")
            return
        line = getattr(rows, "line_num", line + 1)
        if cols is None:
            cols = csvfields.columns([c.strip() for c in row], args.columnsHaveTypes)
            continue
        if not row or row == [""]:
            continue
        try:
            doc = csvfields.row_document(cols, row, args.ignoreBlanks, args.parseGrace)
        except csvfields.CellError as exc:
            yield line, BadInput(line, str(exc))
            continue
        if doc is None:
            continue
        try:
            yield line, bson.encode(doc)
        except Exception as exc:
            yield line, BadInput(line, f"cannot encode the row: {exc}")


# ------------------------------------------------------------------------------------ writing
class Writer:
    def __init__(self, coll: Any, args: argparse.Namespace, log: Log,
                 embedded: bool = False) -> None:
        self.coll, self.args, self.log = coll, args, log
        self.embedded = embedded        # checked documents (keys known) go to a data directory
        self.fields = ([f.strip() for f in args.upsertFields.split(",") if f.strip()]
                       if args.upsertFields else ["_id"])
        self.counts = Counts()
        self._lock = threading.Lock()

    def _selector(self, doc: dict) -> Optional[dict]:
        selector, found = {}, False
        for field in self.fields:
            value: Any = doc
            for part in field.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if value is not None:
                found = True
            selector[field] = value
        return selector if found else None

    def write(self, batch: list, keys: Optional[list] = None) -> tuple[int, int]:
        from pymongo import DeleteOne, InsertOne, ReplaceOne, UpdateOne
        from pymongo.errors import BulkWriteError, PyMongoError
        args = self.args
        bypass = True if args.bypassDocumentValidation else None
        ordered = args.maintainInsertionOrder
        try:
            if args.mode == "insert":
                with collector.paused():
                    docs = (checked(batch, keys) if keys is not None and self.embedded
                            else [RawBSONDocument(r) for r in batch])
                    self.coll.insert_many(docs, ordered=ordered, bypass_document_validation=bypass)
                    del docs    # freed while paused: no collection pass walks them on the way out
                return len(batch), 0
            requests = []
            for raw in batch:
                doc = bson.decode(raw)
                selector = self._selector(doc)
                if selector is None:
                    if args.mode != "delete":
                        requests.append(InsertOne(RawBSONDocument(raw)))
                elif args.mode == "upsert":
                    requests.append(ReplaceOne(selector, RawBSONDocument(raw), upsert=True))
                elif args.mode == "merge":
                    requests.append(UpdateOne(selector, {"$set": doc}, upsert=True))
                else:
                    requests.append(DeleteOne(selector))
            if not requests:
                return 0, 0
            result = self.coll.bulk_write(requests, ordered=ordered,
                                          bypass_document_validation=bypass)
            if args.mode == "delete":
                return result.deleted_count, 0
            return len(requests), 0
        except BulkWriteError as exc:
            details = exc.details
            errors = details.get("writeErrors", [])
            fatal = [e for e in errors if e.get("code") not in IGNORABLE_CODES or args.stopOnError]
            if fatal:
                raise ToolError(f"{fatal[0].get('errmsg')}") from None
            for e in errors:
                self.log.always(f"continuing through error: {e.get('errmsg')}")
            done = (details.get("nInserted", 0) + details.get("nUpserted", 0)
                    + details.get("nMatched", 0) + details.get("nRemoved", 0))
            return done, len(errors)
        except PyMongoError as exc:
            raise ToolError(str(exc)) from None

    def add(self, ok: int, failed: int) -> None:
        with self._lock:
            self.counts.ok += ok
            self.counts.failed += failed


# --------------------------------------------------------------------------------------- run
def _documents(stream: BinaryIO, args: argparse.Namespace,
               workers: Optional[Workers] = None) -> Iterator[tuple[int, Any, Optional[bytes]]]:
    if args.type in ("csv", "tsv"):
        return ((line, item, None) for line, item in table_documents(stream, args))
    if args.jsonArray:
        return ((line, item, None) for line, item in json_array_documents(stream))
    # keys for checked inserts: a data directory's insert mode, streamed (not spooled)
    with_keys = args.mode == "insert" and bool(getattr(args, "dbpath", None)) and not args.stopOnError
    return json_runs(stream, workers, with_keys)


def _parse_workers(args: argparse.Namespace) -> int:
    """Worker processes that parse the input: JSON lines only (an array is one value, CSV
    rows are cheap), from a file of some size or from stdin."""
    if args.type != "json" or args.jsonArray:
        return 0
    size = bsonfile.file_size(args.file) if args.file else None
    return workers_for(None if size is None else size // _LINE_BYTES, PARSE_WORKERS)


#: bytes of a JSON line at the least, to guess an input file's documents from its size
_LINE_BYTES = 100


def _batches(items: Iterator[tuple[int, Any, Optional[bytes]]], size: int, name: str,
             counts: Counts, log: Log, stop: bool) -> Iterator[tuple[list, Optional[list]]]:
    """(documents, their `_id` keys or None when no key is known) per batch: at most `size`
    documents, ending with the one that reaches BATCH_BYTES."""
    batch: list = []
    keys: list = []
    known = 0
    nbytes = 0
    limit = bsonfile.BATCH_BYTES
    for _line, item, key in items:
        if type(item) is Run:       # whole pieces while they stay below the byte limit
            raws, run_keys, at = item.raws, item.keys, 0
            while at < len(raws):
                take = size - len(batch)
                piece = raws[at:at + take]
                piece_bytes = sum(map(len, piece))
                if nbytes + piece_bytes >= limit:
                    break       # the rest one by one, below: the batch ends where it must
                piece_keys = run_keys[at:at + take]
                batch += piece
                keys += piece_keys
                known += len(piece_keys) - piece_keys.count(None)
                nbytes += piece_bytes
                at += len(piece)
                if len(batch) >= size:
                    yield batch, keys if known else None
                    batch, keys, known, nbytes = [], [], 0, 0
            for raw, raw_key in zip(raws[at:], run_keys[at:]):
                batch.append(raw)
                keys.append(raw_key)
                known += raw_key is not None
                nbytes += len(raw)
                if len(batch) >= size or nbytes >= limit:
                    yield batch, keys if known else None
                    batch, keys, known, nbytes = [], [], 0, 0
            continue
        if isinstance(item, BadInput):
            if stop:
                raise ToolError(f"{name}:{item.line}: {item.message}")
            log.error(f"{name}:{item.line}: {item.message}")
            counts.rejected += 1
            continue
        batch.append(item)
        keys.append(key)
        known += key is not None
        nbytes += len(item)
        if len(batch) >= size or nbytes >= limit:
            yield batch, keys if known else None
            batch, keys, known, nbytes = [], [], 0, 0
    if batch:
        yield batch, keys if known else None


def run(args: argparse.Namespace, log: Log) -> int:
    check_arguments(args)
    name = args.file or "stdin"
    if args.file:
        try:
            stream: BinaryIO = open(args.file, "rb")
        except OSError as exc:
            raise ToolError(f"error opening input file {args.file!r}: {exc.strerror}") from None
    else:
        stream = sys.stdin.buffer
    spool = None
    counts = Counts()
    workers = Workers(_parse_workers(args))
    try:
        if args.stopOnError:
            # parse everything first: a malformed input stops here, before any write
            spool = tempfile.TemporaryFile(prefix="ginkgodb-import-")
            for batch, _ in _batches(_documents(stream, args, workers), 10_000, name, counts,
                                     log, True):
                spool.write(b"".join(batch))
            spool.seek(0)
            source: Iterator[tuple[list, Optional[list]]] = (
                (batch, None) for batch in bsonfile.batches(spool, f"{name} (parsed)",
                                                            args.batchSize))
        else:
            source = _batches(_documents(stream, args, workers), args.batchSize, name, counts,
                              log, False)
        conn = connect(args, log, create=True)
        try:
            coll = conn.client[args.db][args.collection]
            log.always(f"connected to: {conn.target}")
            if args.drop:
                log.always(f"dropping: {args.db}.{args.collection}")
                coll.drop()
            writer = Writer(coll, args, log, conn.embedded)
            _write_all(writer, source, args, log)
            counts.ok, counts.failed = writer.counts.ok, writer.counts.failed
        finally:
            conn.close()
    finally:
        workers.close()
        if args.file:
            stream.close()
        if spool is not None:
            spool.close()
    failed = counts.failed + counts.rejected
    verb = "deleted" if args.mode == "delete" else "imported"
    log.always(f"{counts.ok} document(s) {verb} successfully. {failed} document(s) failed to "
               f"{'delete' if args.mode == 'delete' else 'import'}.")
    if counts.rejected:
        log.error(f"{counts.rejected} document(s) of {name} could not be parsed")
        return 1
    return 0


def _write_all(writer: Writer, source: Iterator[list], args: argparse.Namespace,
               log: Log) -> None:
    label = f"{args.db}.{args.collection}"
    with Progress(log, label, None) as progress:
        if args.numInsertionWorkers <= 1:
            for batch, keys in source:
                writer.add(*writer.write(batch, keys))
                progress.advance(len(batch))
            return
        with ThreadPoolExecutor(max_workers=args.numInsertionWorkers) as pool:
            pending: list = []
            for batch, keys in source:
                pending.append((pool.submit(writer.write, batch, keys), len(batch)))
                if len(pending) >= 2 * args.numInsertionWorkers:
                    future, n = pending.pop(0)
                    writer.add(*future.result())
                    progress.advance(n)
            for future, n in pending:
                writer.add(*future.result())
                progress.advance(n)
