"""`ginkgodb dump`: mongodump's output from a server or a data directory.

Layout (`--out DIR`, default `dump`): `DIR/<db>/<coll>.bson` (the documents, BSON back to back)
and `DIR/<db>/<coll>.metadata.json` (see metadata.py); views get only the metadata file; with
`--gzip` every file gets `.gz`; `DIR/prelude.json` records the server's version. `--archive`
writes the same content as one mongodump archive (archive.py), to a file or to stdout.

Consistency: each collection is read by one cursor in natural order (`hint: {$natural: 1}`, or
the `--query` filter), its batches streamed to the output as they come. On ginkgodb natural
order is record-id order and an update rewrites a record in place, so a document that exists for
the whole dump is written exactly once, in the version the cursor met; documents inserted or
deleted meanwhile may or may not appear. Collections are not a snapshot of one moment (nor are
they with mongodump); `--oplog` on a replica set captures what changed during the dump.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, BinaryIO, Optional

from .. import MONGODB_VERSION, __version__
from . import metadata as M
from .archive import ArchiveWriter, CollectionMetadata
from .common import close_output, doc_count, escape_collection, open_output
from .connect import Connection, connect
from .extjson import parse_document
from .log import Log, ToolError, plural
from .namespaces import Matcher
from .progress import Progress

TOOL_VERSION = f"ginkgodb-{__version__}"
_CONFIG_KEEP = {"settings", "tags", "version", "collections", "databases", "chunks", "shards"}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-d", "--db", help="database to dump (default: all but local)")
    parser.add_argument("-c", "--collection", help="collection to dump (needs --db)")
    parser.add_argument("-q", "--query", help="Extended JSON filter, e.g. '{\"x\": {\"$gt\": 1}}' "
                                              "(needs --collection)")
    parser.add_argument("--queryFile", metavar="FILE", help="file holding the --query filter")
    parser.add_argument("-o", "--out", help="output directory, or '-' for the BSON of one "
                                            "collection on stdout (default 'dump')")
    parser.add_argument("--gzip", action="store_true", help="compress the output with gzip")
    parser.add_argument("--archive", nargs="?", const="-", metavar="FILE",
                        help="write one mongodump archive to FILE (stdout when FILE is omitted)")
    parser.add_argument("--nsInclude", action="append", default=[], metavar="PATTERN",
                        help="include namespaces matching the pattern (* is a wildcard); "
                             "repeatable")
    parser.add_argument("--nsExclude", action="append", default=[], metavar="PATTERN",
                        help="exclude namespaces matching the pattern; repeatable")
    parser.add_argument("--excludeCollection", action="append", default=[], metavar="NAME",
                        help="collection to skip (repeatable; with --db)")
    parser.add_argument("--excludeCollectionsWithPrefix", action="append", default=[],
                        metavar="PREFIX", help="skip collections with this prefix (repeatable)")
    parser.add_argument("--oplog", action="store_true",
                        help="also capture the oplog entries written during the dump (needs a "
                             "replica set member: local.oplog.rs)")
    parser.add_argument("-j", "--numParallelCollections", type=int, default=4, metavar="N",
                        help="collections dumped at the same time (default %(default)s)")


@dataclass
class Intent:
    db: str
    meta: M.CollectionMeta
    query: Optional[dict] = None
    count: Optional[int] = None

    @property
    def namespace(self) -> str:
        return f"{self.db}.{self.meta.name}"


def check_arguments(args: argparse.Namespace) -> Optional[dict]:
    """mongodump's argument rules; returns the parsed query, if any."""
    if args.collection and not args.db:
        raise ToolError("cannot dump a collection without a specified database")
    if (args.query or args.queryFile) and not args.collection:
        raise ToolError("cannot dump using a query without a specified collection")
    if args.query and args.queryFile:
        raise ToolError("either --query or --queryFile can be specified as a query option")
    if args.oplog and (args.db or args.collection):
        raise ToolError("--oplog mode only supported on full dumps")
    if args.archive is not None and args.out:
        raise ToolError("--out not allowed when --archive is specified")
    if args.out == "-" and not args.collection:
        raise ToolError("can only dump a single collection to stdout")
    if args.out == "-" and args.gzip:
        raise ToolError("compression can't be used when dumping a single collection to "
                        "standard output")
    if (args.nsInclude or args.nsExclude) and (args.db or args.collection):
        raise ToolError("cannot use --nsInclude or --nsExclude with --db or --collection")
    if (args.excludeCollection or args.excludeCollectionsWithPrefix) and not args.db:
        raise ToolError("--db is required when --excludeCollection or "
                        "--excludeCollectionsWithPrefix is specified")
    if args.numParallelCollections < 1:
        raise ToolError("--numParallelCollections must be at least 1")
    if args.queryFile:
        try:
            with open(args.queryFile, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise ToolError(f"error reading queryFile: {exc.strerror}") from None
        return parse_document(text, f"query file {args.queryFile!r}")
    if args.query:
        return parse_document(args.query, "query")
    return None


def collect_intents(conn: Connection, args: argparse.Namespace, query: Optional[dict],
                    log: Log) -> list[Intent]:
    client = conn.client
    include, exclude = Matcher(args.nsInclude), Matcher(args.nsExclude)
    if args.db:
        databases = [args.db]
    else:
        databases = [d for d in client.list_database_names() if d != "local"]
    intents = []
    for db in databases:
        flt = {"name": args.collection} if args.collection else {}
        infos = list(client[db].list_collections(filter=flt))
        if args.collection and not infos:
            log.always(f"collection {db}.{args.collection} does not exist: nothing to dump")
        for info in sorted(infos, key=lambda i: i["name"]):
            name = info["name"]
            ns = f"{db}.{name}"
            if not args.collection and _skip_system(db, name, args):
                log.debug(f"will not dump system collection {ns}")
                continue
            if name in args.excludeCollection or any(
                    name.startswith(p) for p in args.excludeCollectionsWithPrefix):
                log.info(f"skipping dump of {ns}, it is excluded")
                continue
            if (include and not include.matches(ns)) or (exclude and exclude.matches(ns)):
                log.info(f"skipping dump of {ns}, it is excluded")
                continue
            if info.get("type") == "timeseries":
                raise ToolError(f"cannot dump time-series collection {ns}: not supported")
            indexes = [] if info.get("type") == "view" else list(client[db][name].list_indexes())
            meta = M.from_listing(info, indexes)
            count = None
            if not meta.is_view and query is None:
                count = client[db][name].estimated_document_count()
            intents.append(Intent(db, meta, query, count))
    return intents


def _skip_system(db: str, name: str, args: argparse.Namespace) -> bool:
    if db == "admin":
        return name == "system.keys"
    if db == "config":
        return args.db != "config" and name not in _CONFIG_KEEP
    if name == "system.js":
        return False
    return name.startswith("system.") or ("$" in name and ".oplog.$" not in name)


# ------------------------------------------------------------------------------------- reading
def _raw_batches(conn: Connection, intent: Intent):
    coll = conn.client[intent.db][intent.meta.name]
    if intent.query is not None:
        return coll.find_raw_batches(intent.query)
    return coll.find_raw_batches({}, hint=[("$natural", 1)])


class _Oplog:
    """--oplog: the newest entry before the dump, and the entries written until its end."""

    def __init__(self, conn: Connection) -> None:
        local = conn.client["local"]
        if "oplog.rs" not in local.list_collection_names():
            raise ToolError("error getting oplog start: no oplog found (local.oplog.rs does not "
                            "exist); --oplog needs a replica set member, not a standalone server")
        self.coll = local["oplog.rs"]
        self.start = self._newest()

    def _newest(self) -> Any:
        last = list(self.coll.find({}, {"ts": 1}).sort("$natural", -1).limit(1))
        if not last:
            raise ToolError("error getting oplog start: the oplog is empty")
        return last[0]["ts"]

    def still_has_start(self) -> bool:
        return self.coll.find_one({"ts": self.start}, {"_id": 0, "ts": 1}) is not None

    def batches(self):
        end = self._newest()
        return self.coll.find_raw_batches({"ts": {"$gte": self.start, "$lte": end}})


# ------------------------------------------------------------------------------------- writing
class _Outputs:
    """Files written by this run, removed again if the dump fails (nothing partial is left)."""

    def __init__(self) -> None:
        self.created: list[str] = []
        self._lock = threading.Lock()

    def open(self, path: str, gzipped: bool) -> BinaryIO:
        stream = open_output(path, gzipped)
        with self._lock:
            self.created.append(path)
        return stream

    def remove_all(self) -> None:
        for path in reversed(self.created):
            try:
                os.remove(path)
            except OSError:
                pass


def run(args: argparse.Namespace, log: Log) -> int:
    query = check_arguments(args)
    conn = connect(args, log)
    try:
        return _run(conn, args, query, log)
    finally:
        conn.close()


def _run(conn: Connection, args: argparse.Namespace, query: Optional[dict], log: Log) -> int:
    intents = collect_intents(conn, args, query, log)
    oplog = _Oplog(conn) if args.oplog else None
    server_version = conn.server_version() or MONGODB_VERSION
    outputs = _Outputs()
    try:
        if args.archive is not None:
            total = _dump_archive(conn, args, intents, oplog, server_version, outputs, log)
        elif args.out == "-":
            total = _dump_stdout(conn, intents, log)
        else:
            total = _dump_directory(conn, args, intents, oplog, server_version, outputs, log)
    except BaseException:
        outputs.remove_all()
        raise
    log.info(f"dumped {plural(total, 'document')}")
    return 0


def _parallel(jobs: int, intents: list[Intent], work) -> int:
    """Run `work(intent) -> count` over the intents, `jobs` at a time; the first error wins."""
    if jobs <= 1 or len(intents) <= 1:
        return sum(work(i) for i in intents)
    stop = threading.Event()

    def guarded(intent: Intent) -> int:
        if stop.is_set():
            return 0
        try:
            return work(intent)
        except BaseException:
            stop.set()
            raise

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(guarded, i) for i in intents]
        total, error = 0, None
        for f in futures:
            try:
                total += f.result()
            except BaseException as exc:    # re-raised after every job has stopped
                error = error or exc
        if error is not None:
            raise error
        return total


def _stream_collection(conn: Connection, intent: Intent, write, log: Log) -> int:
    n = 0
    with Progress(log, intent.namespace, intent.count) as progress:
        for data in _raw_batches(conn, intent):
            k = doc_count(data)
            write(data)
            n += k
            progress.advance(k)
    return n


def _dump_directory(conn: Connection, args: argparse.Namespace, intents: list[Intent],
                    oplog: Optional[_Oplog], server_version: str, outputs: _Outputs,
                    log: Log) -> int:
    root = args.out or "dump"
    gz = ".gz" if args.gzip else ""
    for intent in intents:
        os.makedirs(os.path.join(root, intent.db), exist_ok=True)
        path = os.path.join(root, intent.db, escape_collection(intent.meta.name) + ".metadata.json" + gz)
        stream = outputs.open(path, args.gzip)
        try:
            stream.write(intent.meta.text().encode())
        finally:
            close_output(stream)

    def work(intent: Intent) -> int:
        if intent.meta.is_view:
            log.info(f"not dumping data for {intent.namespace} because it is a view")
            return 0
        path = os.path.join(root, intent.db, escape_collection(intent.meta.name) + ".bson" + gz)
        log.always(f"writing {intent.namespace} to {path}")
        stream = outputs.open(path, args.gzip)
        try:
            n = _stream_collection(conn, intent, stream.write, log)
        finally:
            close_output(stream)
        log.always(f"done dumping {intent.namespace} ({plural(n, 'document')})")
        return n

    total = _parallel(args.numParallelCollections, intents, work)
    if oplog is not None:
        total += _dump_oplog_file(oplog, os.path.join(root, "oplog.bson" + gz), args.gzip,
                                  outputs, log)
    if intents or oplog is not None:
        os.makedirs(os.path.join(root, args.db) if args.db else root, exist_ok=True)
        prelude = os.path.join(root, args.db, "prelude.json") if args.db else os.path.join(root, "prelude.json")
        stream = outputs.open(prelude + gz, args.gzip)
        try:
            stream.write(f'{{"ServerVersion":"{server_version}","ToolVersion":"{TOOL_VERSION}"}}'.encode())
        finally:
            close_output(stream)
    return total


def _dump_oplog_file(oplog: _Oplog, path: str, gzipped: bool, outputs: _Outputs, log: Log) -> int:
    if not oplog.still_has_start():
        raise ToolError("oplog overflow: mongodump was unable to capture all new oplog entries "
                        "during execution")
    log.always(f"writing captured oplog to {path}")
    stream = outputs.open(path, gzipped)
    n = 0
    try:
        for data in oplog.batches():
            stream.write(data)
            n += doc_count(data)
    finally:
        close_output(stream)
    if not oplog.still_has_start():
        raise ToolError("oplog overflow: mongodump was unable to capture all new oplog entries "
                        "during execution")
    log.always(f"\tdumped {plural(n, 'oplog entry', 'oplog entries')}")
    return n


def _dump_stdout(conn: Connection, intents: list[Intent], log: Log) -> int:
    out = sys.stdout.buffer
    total = 0
    for intent in intents:
        log.always(f"writing {intent.namespace} to stdout")
        total += _stream_collection(conn, intent, out.write, log)
        log.always(f"dumped {plural(total, 'document')}")
    out.flush()
    return total


def _dump_archive(conn: Connection, args: argparse.Namespace, intents: list[Intent],
                  oplog: Optional[_Oplog], server_version: str, outputs: _Outputs,
                  log: Log) -> int:
    to_stdout = args.archive == "-"
    if to_stdout:
        import gzip as _gzip

        from .common import GZIP_LEVEL
        raw: Any = sys.stdout.buffer
        stream: Any = (_gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=GZIP_LEVEL, mtime=0)
                       if args.gzip else raw)
        where = "archive on stdout"
    else:
        stream = outputs.open(args.archive, args.gzip)
        where = f"archive {args.archive!r}"
    writer = ArchiveWriter(stream)
    lock = threading.Lock()
    metas = [CollectionMetadata(db=i.db, collection=i.meta.name, metadata=i.meta.text(),
                                size=0, type=i.meta.type) for i in intents]
    if oplog is not None:
        metas.append(CollectionMetadata(db="", collection="oplog"))
    try:
        writer.prelude(server_version, TOOL_VERSION, args.numParallelCollections, metas)

        def work(intent: Intent) -> int:
            db, name = intent.db, intent.meta.name
            if intent.meta.is_view:
                with lock:
                    writer.end(db, name)
                return 0
            log.always(f"writing {intent.namespace} to {where}")

            def write(data: bytes) -> None:
                with lock:
                    writer.write(db, name, data)

            n = _stream_collection(conn, intent, write, log)
            with lock:
                writer.end(db, name)
            log.always(f"done dumping {intent.namespace} ({plural(n, 'document')})")
            return n

        total = _parallel(args.numParallelCollections, intents, work)
        if oplog is not None:
            if not oplog.still_has_start():
                raise ToolError("oplog overflow: mongodump was unable to capture all new oplog "
                                "entries during execution")
            n = 0
            for data in oplog.batches():
                writer.write("", "oplog", data)
                n += doc_count(data)
            writer.end("", "oplog")
            log.always(f"\tdumped {plural(n, 'oplog entry', 'oplog entries')}")
            total += n
    finally:
        if to_stdout:
            if stream is not raw:
                stream.close()
            raw.flush()
        else:
            close_output(stream)
    return total

