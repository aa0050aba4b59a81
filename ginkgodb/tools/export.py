"""`ginkgodb export`: one collection as Extended JSON v2 or CSV/TSV (mongoexport).

JSON: one document per line, relaxed by default (`--jsonFormat canonical` keeps every type, so
`import` gives back the same BSON), `--jsonArray` for one array, `--pretty` to indent. CSV/TSV
need `--fields`/`--fieldFile`; values are written as mongoexport writes them: strings as they
are, numbers in their shortest form, dates as `2006-01-02T15:04:05.000Z`, ObjectIds as
`ObjectId(<hex>)`, documents and arrays as relaxed Extended JSON, missing fields and null empty.
Batches come from the server raw and are decoded with pymongo's C codec, a batch at a time;
on a machine with two cores or more, JSON batches are decoded and encoded by two worker
processes and written in the order read, so the output is the same.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import sys
from collections.abc import Iterable
from typing import Any, BinaryIO, Optional

import bson
import orjson
from bson.decimal128 import Decimal128
from bson.objectid import ObjectId

from . import extjson
from .connect import connect
from .log import Log, ToolError, plural
from .parallel import Workers, workers_for
from .progress import Progress

#: documents per batch read when the JSON is encoded in worker processes: small enough that
#: both workers have batches to encode while this process reads and writes
PARALLEL_BATCH = 5000


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-d", "--db", required=True, help="database of the collection")
    parser.add_argument("-c", "--collection", required=True, help="collection to export")
    parser.add_argument("-o", "--out", help="output file (default: stdout)")
    parser.add_argument("--type", default="json", choices=["json", "csv", "tsv"],
                        help="output format (default %(default)s)")
    parser.add_argument("-f", "--fields", help="comma-separated field names (needed for CSV/TSV; "
                                               "a projection for JSON)")
    parser.add_argument("--fieldFile", metavar="FILE", help="file with one field name per line")
    parser.add_argument("--noHeaderLine", action="store_true",
                        help="CSV/TSV: do not write the field names first")
    parser.add_argument("--jsonFormat", default="relaxed", choices=["relaxed", "canonical"],
                        help="Extended JSON mode (default %(default)s)")
    parser.add_argument("--jsonArray", action="store_true", help="write one JSON array")
    parser.add_argument("--pretty", action="store_true", help="indent JSON output")
    parser.add_argument("-q", "--query", help="Extended JSON filter")
    parser.add_argument("--queryFile", metavar="FILE", help="file holding the --query filter")
    parser.add_argument("--sort", help="Extended JSON sort document, e.g. '{\"a\": 1}'")
    parser.add_argument("--skip", type=int, default=0, help="documents to skip")
    parser.add_argument("--limit", type=int, default=0, help="at most this many documents")
    parser.add_argument("--forceTableScan", action="store_true",
                        help="read in natural order (hint {$natural: 1})")
    parser.add_argument("--assertExists", action="store_true",
                        help="fail when the collection does not exist")


def read_fields(args: argparse.Namespace) -> Optional[list[str]]:
    if args.fields and args.fieldFile:
        raise ToolError("incompatible options: --fields and --fieldFile")
    if args.fieldFile:
        try:
            with open(args.fieldFile, encoding="utf-8") as f:
                return [line.strip() for line in f if line.strip()]
        except OSError as exc:
            raise ToolError(f"error reading fieldFile {args.fieldFile!r}: {exc.strerror}") from None
    if args.fields:
        return [f.strip() for f in args.fields.split(",") if f.strip()]
    return None


def _query(args: argparse.Namespace) -> dict:
    if args.query and args.queryFile:
        raise ToolError("either --query or --queryFile can be specified as a query option")
    if args.queryFile:
        try:
            with open(args.queryFile, encoding="utf-8") as f:
                return extjson.parse_document(f.read(), f"query file {args.queryFile!r}")
        except OSError as exc:
            raise ToolError(f"error reading queryFile: {exc.strerror}") from None
    return extjson.parse_document(args.query, "query") if args.query else {}


# --------------------------------------------------------------------------------- CSV values
def _go_float(value: float) -> str:
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def csv_value(value: Any) -> str:
    """A value as mongoexport writes it in a CSV cell."""
    kind = type(value)
    if kind is str:
        return value
    if value is None:
        return ""
    if kind is bool:
        return "true" if value else "false"
    if kind is float:
        return _go_float(value)
    if isinstance(value, int):
        return str(int(value))
    if kind is ObjectId:
        return f"ObjectId({value})"
    if kind is dt.datetime:
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    if kind is Decimal128:
        return str(value)
    if isinstance(value, (dict, list)):
        return extjson.dumps_relaxed(value).decode()
    return orjson.dumps(extjson.json_util.default(value, extjson.RELAXED),
                        default=extjson._relaxed_default).decode()


_MISSING = object()


def field_value(doc: Any, path: str) -> Any:
    """The value at a dotted path (array positions as numbers); missing -> _MISSING."""
    value = doc
    for part in path.split("."):
        if isinstance(value, dict):
            value = value.get(part, _MISSING)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
        if value is _MISSING:
            return _MISSING
    return value


# --------------------------------------------------------------------------------------- run
def run(args: argparse.Namespace, log: Log) -> int:
    fields = read_fields(args)
    if args.type in ("csv", "tsv") and not fields:
        raise ToolError(f"{args.type.upper()} mode requires a field list")
    if args.type != "json" and (args.jsonArray or args.pretty):
        raise ToolError("--jsonArray and --pretty apply to JSON output only")
    if args.skip < 0 or args.limit < 0:
        raise ToolError("--skip and --limit must not be negative")
    query = _query(args)
    sort = extjson.parse_document(args.sort, "sort") if args.sort else None
    conn = connect(args, log)
    try:
        coll = conn.client[args.db][args.collection]
        if args.assertExists and args.collection not in conn.client[args.db].list_collection_names(
                filter={"name": args.collection}):
            raise ToolError(f"collection '{args.collection}' does not exist")
        kwargs: dict[str, Any] = {}
        if fields and args.type == "json":
            kwargs["projection"] = {f: 1 for f in fields}
        if sort:
            kwargs["sort"] = list(sort.items())
        if args.skip:
            kwargs["skip"] = args.skip
        if args.limit:
            kwargs["limit"] = args.limit
        if args.forceTableScan:
            kwargs["hint"] = [("$natural", 1)]
        total = None
        if not query and not args.limit and not args.skip:
            total = coll.estimated_document_count()
        out, closing = _open_out(args.out)
        n = 0
        expected = total if total is not None else (args.limit or None)
        try:
            if args.type == "json":
                n = _export_json(coll, query, kwargs, args, out, log, total, expected)
            else:
                writer = _TableWriter(args, fields, out)
                with Progress(log, f"{args.db}.{args.collection}", total) as progress:
                    for raw in coll.find_raw_batches(query, **kwargs):
                        # one document decoded at a time: a whole 16 MB batch of decoded
                        # documents alive at once makes every garbage collection pass walk them
                        count = writer.write(bson.decode_iter(raw, writer.codec))
                        n += count
                        progress.advance(count)
                writer.finish()
        finally:
            if closing:
                out.close()
            else:
                out.flush()
    finally:
        conn.close()
    log.always(f"exported {plural(n, 'record')}")
    return 0


def _export_json(coll: Any, query: dict, kwargs: dict, args: argparse.Namespace, out: BinaryIO,
                 log: Log, total: Optional[int], expected: Optional[int]) -> int:
    """The documents as JSON text, encoded by two worker processes on a machine with two
    cores (batch by batch, written in the order read, so the output is the same either way)."""
    writer = _JsonWriter(args, out)
    n = 0
    with Workers(workers_for(expected, 2)) as workers, \
            Progress(log, f"{args.db}.{args.collection}", total) as progress:
        if workers.n:
            kwargs = {**kwargs, "batch_size": PARALLEL_BATCH}
        jobs = ((args.jsonFormat, args.pretty, args.jsonArray, raw)
                for raw in coll.find_raw_batches(query, **kwargs))
        for text, count in workers.ordered_map(encode_batch, jobs):
            writer.write_text(text, count)
            n += count
            progress.advance(count)
    writer.finish()
    return n


_ENCODERS: dict[str, tuple[Any, Any]] = {}


def encode_batch(job: tuple[str, bool, bool, bytes]) -> tuple[bytes, int]:
    """(the JSON text of a raw batch's documents, how many) for `_JsonWriter.write_text`; runs
    in a worker process or inline."""
    mode, pretty, array, raw = job
    encoder = _ENCODERS.get(mode)
    if encoder is None:
        encoder = _ENCODERS[mode] = extjson.batch_encoder(mode)
    codec, dumps = encoder
    # one document decoded at a time: a whole 16 MB batch of decoded documents alive at once
    # makes every garbage collection pass walk them all
    texts = list(map(dumps, bson.decode_iter(raw, codec)))
    if pretty:
        texts = [orjson.dumps(orjson.loads(t), option=orjson.OPT_INDENT_2) for t in texts]
    if not texts:
        return b"", 0
    if array:
        return (b",\n" if pretty else b",").join(texts), len(texts)
    return b"\n".join(texts) + b"\n", len(texts)


def _open_out(path: Optional[str]) -> tuple[BinaryIO, bool]:
    if not path or path == "-":
        return sys.stdout.buffer, False
    try:
        return open(path, "wb"), True
    except OSError as exc:
        raise ToolError(f"error opening output file {path!r}: {exc.strerror}") from None


class _JsonWriter:
    def __init__(self, args: argparse.Namespace, out: BinaryIO) -> None:
        self.out = out
        self.pretty = args.pretty
        self.array = args.jsonArray
        self.first = True
        if self.array:
            out.write(b"[")

    def write_text(self, text: bytes, count: int) -> None:
        """Write one batch's text from `encode_batch`."""
        if not count:
            return
        if self.array and not self.first:
            self.out.write(b",\n" if self.pretty else b",")
        self.out.write(text)
        self.first = False

    def finish(self) -> None:
        if self.array:
            self.out.write(b"]\n")


class _TableWriter:
    codec = extjson.EXPORT_CODEC

    def __init__(self, args: argparse.Namespace, fields: list[str], out: BinaryIO) -> None:
        self.out = out
        self.fields = fields
        self.buf = io.StringIO()
        if args.type == "csv":
            self.writer = csv.writer(self.buf, lineterminator="\n")
            self.row = self.writer.writerow
        else:
            self.row = self._tsv_row
        if not args.noHeaderLine:
            self.row(fields)
            self._flush()

    def _tsv_row(self, cells: list) -> None:
        self.buf.write("\t".join(cells) + "\n")

    def _flush(self) -> None:
        self.out.write(self.buf.getvalue().encode())
        self.buf.seek(0)
        self.buf.truncate()

    def write(self, docs: Iterable[Any]) -> int:
        """Write the documents' rows; how many there were."""
        n = 0
        for doc in docs:
            cells = []
            for f in self.fields:
                value = field_value(doc, f)
                cells.append("" if value is _MISSING else csv_value(value))
            self.row(cells)
            n += 1
        self._flush()
        return n

    def finish(self) -> None:
        self._flush()
