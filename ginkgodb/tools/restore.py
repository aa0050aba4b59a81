"""`ginkgodb restore`: mongorestore for dumps of `ginkgodb dump` and of mongodump 100.x.

Order of work, as mongorestore's:
1. The whole input is checked first, before anything is written: every metadata file parsed,
   every `.bson` file's framing walked (each document's length and trailing NUL; `--objcheck`
   also decodes every document), an archive read through once with its CRCs checked (an archive
   on stdin is spooled to a temporary file for that). A malformed input therefore stops with the
   file, the byte offset and the problem, and leaves the target untouched.
2. Collections (up to `--numParallelCollections` at a time): dropped with `--drop`, created with
   the dumped options (validator, collation, capped...) unless they exist, then filled with
   `insert_many` batches of RawBSONDocument, unordered unless `--maintainInsertionOrder`. Into a
   data directory, on a machine with two cores or more, two worker processes check
   each batch's documents (bsonutil.checked) while the previous batch is inserted, and the
   engine stores the documents they vouched for without decoding them again. An uncompressed
   `.bson` file's or archive file's batches are planned by the check pass (byte spans,
   bsonfile.spans, Segment.start/stop; the first batch small, so the inserts start sooner) and
   each is read and cut by its worker: this process only inserts. (A gzipped input, or an
   archive on stdin, is read again here and its documents handed to the workers.) Duplicate keys and validation
   failures are logged (`continuing through error: ...`), counted and passed over unless
   `--stopOnError`; any other write error stops the restore.
3. Views, then every collection's indexes: one createIndexes per collection, after its data.
"""
from __future__ import annotations

import argparse
import gzip
import os
import shutil
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, BinaryIO, Optional

import bson
from bson.raw_bson import RawBSONDocument

from ..bsonutil.checked import check_documents, checked
from . import bsonfile, collector
from . import metadata as M
from .archive import ArchiveReader, Segment
from .common import unescape_collection
from .connect import Connection, connect
from .log import Log, ToolError, plural
from .namespaces import Matcher, Renamer
from .parallel import Workers, workers_for
from .progress import Progress

IGNORABLE_CODES = {11000, 11001, 12582, 121}   # duplicate key, document validation
#: worker processes checking documents, at most (one per core below that): a batch's check
#: costs about what its insert here does, so more than two would wait on this process
CHECK_WORKERS = 2
_ID_KEY = {"_id": 1}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", metavar="PATH",
                        help="dump directory, database directory or .bson file (default 'dump')")
    parser.add_argument("--dir", metavar="DIR", help="same as PATH")
    parser.add_argument("-d", "--db", help="database to restore into (with a database directory "
                                           "or .bson file), else only this database")
    parser.add_argument("-c", "--collection", help="collection to restore into (with a .bson "
                                                   "file), else only this collection")
    parser.add_argument("--archive", nargs="?", const="-", metavar="FILE",
                        help="restore from a mongodump archive (stdin when FILE is omitted)")
    parser.add_argument("--gzip", action="store_true", help="the input is gzip-compressed")
    parser.add_argument("--nsInclude", action="append", default=[], metavar="PATTERN",
                        help="restore only namespaces matching the pattern; repeatable")
    parser.add_argument("--nsExclude", action="append", default=[], metavar="PATTERN",
                        help="skip namespaces matching the pattern; repeatable")
    parser.add_argument("--nsFrom", action="append", default=[], metavar="PATTERN",
                        help="rename namespaces matching the pattern (pairs with --nsTo)")
    parser.add_argument("--nsTo", action="append", default=[], metavar="PATTERN",
                        help="new name for the matching --nsFrom")
    parser.add_argument("--drop", action="store_true", help="drop each collection before "
                                                            "restoring it")
    parser.add_argument("--dryRun", action="store_true", help="check the input and say what "
                                                              "would be restored; write nothing")
    parser.add_argument("--noIndexRestore", action="store_true", help="do not restore indexes")
    parser.add_argument("--noOptionsRestore", action="store_true",
                        help="do not restore collection options")
    parser.add_argument("--keepIndexVersion", action="store_true",
                        help="keep the dumped index version `v`")
    parser.add_argument("--maintainInsertionOrder", action="store_true",
                        help="insert in the order of the input, one batch at a time; implies "
                             "--stopOnError")
    parser.add_argument("-j", "--numParallelCollections", type=int, default=4, metavar="N",
                        help="collections restored at the same time (default %(default)s)")
    parser.add_argument("--numInsertionWorkersPerCollection", type=int, default=1, metavar="N",
                        help="insert batches in flight per collection (default %(default)s)")
    parser.add_argument("--stopOnError", action="store_true",
                        help="stop at the first write error, duplicate keys included")
    parser.add_argument("--bypassDocumentValidation", action="store_true",
                        help="insert without checking the collections' validators")
    parser.add_argument("--objcheck", action="store_true",
                        help="decode every document while checking the input")
    parser.add_argument("--batchSize", type=int, default=bsonfile.BATCH_DOCUMENTS, help=argparse.SUPPRESS)


@dataclass
class Intent:
    """One namespace to restore: where its data is and where it goes."""
    db: str                       # as dumped
    coll: str
    target_db: str
    target_coll: str
    meta: Optional[M.CollectionMeta] = None
    data_path: Optional[str] = None     # .bson file (directory dumps)
    count: int = 0                      # documents, from the check pass
    #: an uncompressed .bson file's insert batches, from the check pass (bsonfile.spans)
    spans: Optional[list[tuple[int, int, int]]] = None

    @property
    def source(self) -> str:
        return f"{self.db}.{self.coll}"

    @property
    def target(self) -> str:
        return f"{self.target_db}.{self.target_coll}"

    @property
    def is_view(self) -> bool:
        return self.meta is not None and self.meta.is_view


@dataclass
class Result:
    ok: int = 0
    failed: int = 0

    def add(self, other: Result) -> None:
        self.ok += other.ok
        self.failed += other.failed


class Selection:
    """--db/--collection filters, --nsInclude/--nsExclude and --nsFrom/--nsTo together."""

    def __init__(self, args: argparse.Namespace, filter_db: Optional[str],
                 filter_coll: Optional[str]) -> None:
        self.include, self.exclude = Matcher(args.nsInclude), Matcher(args.nsExclude)
        self.renamer = Renamer(args.nsFrom, args.nsTo)
        self.filter_db, self.filter_coll = filter_db, filter_coll

    def target(self, db: str, coll: str) -> Optional[tuple[str, str]]:
        ns = f"{db}.{coll}"
        if self.filter_db is not None and db != self.filter_db:
            return None
        if self.filter_coll is not None and coll != self.filter_coll:
            return None
        if self.include and not self.include.matches(ns):
            return None
        if self.exclude and self.exclude.matches(ns):
            return None
        new = self.renamer.rename(ns)
        tdb, _, tcoll = new.partition(".")
        if not tdb or not tcoll:
            raise ToolError(f"--nsTo renames {ns} to {new!r}, which is not a namespace")
        return tdb, tcoll


def check_arguments(args: argparse.Namespace) -> None:
    if args.path and args.dir:
        raise ToolError("cannot use both --dir and a positional argument to set the input "
                        "directory")
    if args.archive is not None and (args.path or args.dir):
        raise ToolError("cannot use --archive with a directory argument")
    if args.collection and not args.db:
        raise ToolError("cannot restore a collection without a specified database")
    if (args.nsInclude or args.nsExclude or args.nsFrom or args.nsTo) and (args.db or args.collection):
        raise ToolError("cannot use --nsInclude, --nsExclude, --nsFrom or --nsTo with --db or "
                        "--collection")
    if args.numParallelCollections < 1 or args.numInsertionWorkersPerCollection < 1:
        raise ToolError("--numParallelCollections and --numInsertionWorkersPerCollection must "
                        "be at least 1")
    if args.batchSize < 1:
        raise ToolError("--batchSize must be at least 1")
    if args.maintainInsertionOrder:
        args.stopOnError = True
        args.numInsertionWorkersPerCollection = 1


# ------------------------------------------------------------------------------------ sources
def _strip_gz(name: str, gzipped: bool) -> Optional[str]:
    if gzipped:
        return name[:-3] if name.endswith(".gz") else None
    return None if name.endswith(".gz") else name


def _read_text(path: str, gzipped: bool) -> str:
    try:
        with (gzip.open(path, "rt", encoding="utf-8") if gzipped else
              open(path, encoding="utf-8")) as f:
            return f.read()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ToolError(f"{path}: error reading metadata: {exc}") from None


def _db_dir_intents(directory: str, db: str, args: argparse.Namespace, sel: Selection,
                    log: Log, target_db: Optional[str] = None) -> list[Intent]:
    """The collections of one database directory (`<coll>.bson`, `<coll>.metadata.json`)."""
    files: dict[str, dict[str, str]] = {}
    for entry in sorted(os.listdir(directory)):
        path = os.path.join(directory, entry)
        if os.path.isdir(path):
            log.info(f"skipping directory {path}")
            continue
        name = _strip_gz(entry, args.gzip)
        if name is None:
            if entry.endswith(".gz") or entry.endswith(".bson") or entry.endswith(".json"):
                log.info(f"skipping {path}: {'needs' if entry.endswith('.gz') else 'not a'} --gzip file")
            continue
        if name.endswith(".metadata.json"):
            files.setdefault(name[:-len(".metadata.json")], {})["meta"] = path
        elif name.endswith(".bson"):
            files.setdefault(name[:-len(".bson")], {})["bson"] = path
        elif name == "prelude.json":
            continue
        else:
            log.info(f"skipping file {path}: not a .bson or .metadata.json file")
    intents = []
    for stem, found in files.items():
        meta = None
        if "meta" in found:
            meta = M.parse(_read_text(found["meta"], args.gzip), found["meta"],
                           unescape_collection(stem))
        coll = meta.name if meta is not None else unescape_collection(stem)
        if coll.startswith("system.") and coll not in ("system.js", "system.views"):
            log.info(f"skipping restore of system collection {db}.{coll}")
            continue
        if coll == "system.views" and "bson" in found:
            intents.extend(_legacy_views(found["bson"], db, args, sel, target_db))
            continue
        if meta is not None and meta.type == "timeseries":
            raise ToolError(f"{found['meta']}: time-series collections are not supported")
        target = sel.target(db, coll)
        if target is None:
            log.debug(f"skipping {db}.{coll}: not selected")
            continue
        tdb, tcoll = target
        if target_db is not None:
            tdb = target_db
        if "bson" not in found and (meta is None or not meta.is_view):
            log.info(f"{db}.{coll}: metadata without data; restoring an empty collection")
        intents.append(Intent(db, coll, tdb, tcoll, meta, found.get("bson")))
    return intents


def _legacy_views(path: str, db: str, args: argparse.Namespace, sel: Selection,
                  target_db: Optional[str]) -> list[Intent]:
    """Views from a `system.views.bson` (mongodump before 100.x dumped views so)."""
    intents = []
    with bsonfile.open_input(path, args.gzip) as stream:
        for batch in bsonfile.batches(stream, path):
            for raw in batch:
                view = bson.decode(raw)
                ns = str(view.get("_id", ""))
                vdb, _, name = ns.partition(".")
                target = sel.target(vdb or db, name)
                if not name or target is None:
                    continue
                options = {"viewOn": view.get("viewOn"), "pipeline": view.get("pipeline", [])}
                if "collation" in view:
                    options["collation"] = view["collation"]
                meta = M.CollectionMeta(name=name, type="view", options=options)
                intents.append(Intent(vdb or db, name, target_db or target[0], target[1], meta))
    return intents


def directory_intents(args: argparse.Namespace, log: Log) -> list[Intent]:
    root = args.path or args.dir or "dump"
    if root == "-":
        raise ToolError("restoring BSON from stdin is not supported: use --archive")
    if os.path.isfile(root):
        return _file_intent(root, args)
    if not os.path.isdir(root):
        raise ToolError(f"mongorestore target {root!r} invalid: no such file or directory")
    entries = os.listdir(root)
    subdirs = [e for e in entries if os.path.isdir(os.path.join(root, e))]
    data_files = [e for e in entries if _strip_gz(e, args.gzip) and
                  _strip_gz(e, args.gzip).endswith((".bson", ".metadata.json"))  # type: ignore[union-attr]
                  and not e.startswith("oplog.bson")]
    if data_files and not subdirs:       # a database directory: dump/<db>
        if not args.db:
            args.db = os.path.basename(os.path.normpath(root))
        sel = Selection(args, None, args.collection)
        return _db_dir_intents(root, args.db, args, sel, log, target_db=args.db)
    sel = Selection(args, args.db, args.collection)
    intents = []
    for entry in sorted(entries):
        path = os.path.join(root, entry)
        if entry in ("oplog.bson", "oplog.bson.gz"):
            log.always(f"skipping {path}: oplog replay (--oplogReplay) is not supported")
        elif os.path.isdir(path):
            if entry == "admin" or entry == "local" or entry == "config":
                log.info(f"skipping {entry} database (users, roles and internal collections "
                         "are not restored)")
                continue
            intents.extend(_db_dir_intents(path, entry, args, sel, log))
    return intents


def _file_intent(path: str, args: argparse.Namespace) -> list[Intent]:
    name = _strip_gz(os.path.basename(path), args.gzip)
    if name is None or not name.endswith(".bson"):
        raise ToolError(f"file {path!r} does not have a .bson extension"
                        + (" (add --gzip for .gz files)" if path.endswith(".gz") else ""))
    stem = name[:-len(".bson")]
    db = args.db or os.path.basename(os.path.dirname(os.path.abspath(path)))
    coll = args.collection or unescape_collection(stem)
    meta_path = os.path.join(os.path.dirname(path), stem + ".metadata.json" + (".gz" if args.gzip else ""))
    meta = None
    if os.path.exists(meta_path):
        meta = M.parse(_read_text(meta_path, args.gzip), meta_path, coll)
    return [Intent(db, coll, db, coll, meta, path)]


# -------------------------------------------------------------------------------- check pass
def check_files(intents: list[Intent], args: argparse.Namespace, log: Log) -> None:
    """Walk every .bson file once (framing, and with --objcheck every document)."""
    for intent in intents:
        if intent.data_path is None:
            continue
        n = 0
        with bsonfile.open_input(intent.data_path, args.gzip) as stream:
            if not args.objcheck and not args.gzip:
                intent.spans = bsonfile.spans(stream, intent.data_path, args.batchSize)
                n = sum(span[2] for span in intent.spans)
            elif not args.objcheck:
                n = bsonfile.count(stream, intent.data_path)
            for batch in bsonfile.batches(stream, intent.data_path, 10_000) if args.objcheck else ():
                _objcheck(batch, intent.data_path)
                n += len(batch)
        intent.count = n
        log.debug(f"checked {intent.data_path}: {plural(n, 'document')}")


def _objcheck(batch: list, where: str) -> None:
    try:
        bson.decode_all(b"".join(batch))
    except Exception:
        for i, raw in enumerate(batch):
            try:
                bson.decode(raw)
            except Exception as exc:
                raise ToolError(f"{where}: document #{i} of a batch is invalid BSON: {exc}") from None


def _spool_stdin(gzipped: bool) -> BinaryIO:
    spool = tempfile.TemporaryFile(prefix="ginkgodb-restore-")
    shutil.copyfileobj(sys.stdin.buffer, spool, 1 << 20)
    spool.seek(0)
    return spool


def _open_archive(args: argparse.Namespace, spool: Optional[BinaryIO]) -> tuple[Any, str]:
    if args.archive == "-":
        assert spool is not None
        spool.seek(0)
        raw: Any = spool
        name = "archive on stdin"
    else:
        try:
            raw = open(args.archive, "rb")
        except OSError as exc:
            raise ToolError(f"error opening archive {args.archive!r}: {exc.strerror}") from None
        name = args.archive
    return (gzip.GzipFile(fileobj=raw, mode="rb") if args.gzip else raw), name


def archive_intents(args: argparse.Namespace, log: Log, spool: Optional[BinaryIO]
                    ) -> tuple[list[Intent], Optional[list[Segment]]]:
    """Read the archive through once (all CRCs): the intents of its prelude, and for an
    uncompressed archive file its segments as the restore inserts them, without their
    documents (where they are: Segment.start/stop), else None (read again then)."""
    stream, name = _open_archive(args, spool)
    sel = Selection(args, args.db, args.collection)
    counts: dict[tuple[str, str], int] = {}
    plan: Optional[list[Segment]] = [] if args.archive != "-" and not args.gzip else None
    try:
        reader = ArchiveReader(stream, name, args.batchSize, bsonfile.RAMP_FIRST)
        prelude = reader.read_prelude()
        for seg in reader.segments():
            if args.objcheck and seg.docs:
                _objcheck(seg.docs, f"{name}: {seg.db}.{seg.collection}")
            key = (seg.db, seg.collection)
            counts[key] = counts.get(key, 0) + len(seg.docs)
            if plan is not None:
                plan.append(Segment(seg.db, seg.collection, [], seg.eof, seg.start, seg.stop))
    finally:
        if stream is not spool:     # the spool is read twice; run() closes it
            stream.close()
    intents = []
    by_ns: dict = {}
    for cm in prelude.collections:
        if cm.db == "" and cm.collection == "oplog":
            log.always("skipping the archive's oplog: oplog replay (--oplogReplay) is not "
                       "supported")
            continue
        if cm.db in ("admin", "local", "config"):
            log.info(f"skipping {cm.db}.{cm.collection} (users, roles and internal collections "
                     "are not restored)")
            continue
        if cm.collection.startswith("system.") and cm.collection != "system.js":
            log.info(f"skipping restore of system collection {cm.db}.{cm.collection}")
            continue
        meta = M.parse(cm.metadata, f"{name} ({cm.db}.{cm.collection} metadata)",
                       cm.collection) if cm.metadata else None
        if cm.type == "timeseries" or (meta is not None and meta.type == "timeseries"):
            raise ToolError(f"{name}: {cm.db}.{cm.collection}: time-series collections are not "
                            "supported")
        target = sel.target(cm.db, cm.collection)
        if target is None:
            continue
        intent = Intent(cm.db, cm.collection, target[0], target[1], meta,
                        count=counts.get((cm.db, cm.collection), 0))
        intents.append(intent)
        by_ns[(cm.db, cm.collection)] = intent
    for key in counts:
        if key not in by_ns and key != ("", "oplog") and sel.target(*key) is not None \
                and key[0] not in ("admin", "local", "config") and not key[1].startswith("system."):
            raise ToolError(f"{name}: no intent for collection in archive: `{key[0]}.{key[1]}`")
    return intents, plan


# ------------------------------------------------------------------------------------ writing
class Restorer:
    """Writes intents into the target through its pymongo-shaped client."""

    def __init__(self, conn: Connection, args: argparse.Namespace, log: Log,
                 workers: Optional[Workers] = None) -> None:
        self.conn, self.args, self.log = conn, args, log
        self._lock = threading.Lock()
        self.workers = workers or Workers(0)

    def keyed(self, items: Iterable[Any], docs_of: Callable[[Any], list]) -> Iterator[tuple[Any, Any]]:
        """(item, the `_id` keys of its documents or None) in order: the documents are checked
        in the worker processes while the previous ones are inserted here (inline: None, and
        the engine checks them as it inserts)."""
        if self.workers.n == 0:
            for item in items:
                yield item, None
            return
        sent: deque = deque()

        def feed() -> Iterator[list]:
            for item in items:
                sent.append(item)
                yield docs_of(item)

        for keys in self.workers.ordered_map(check_documents, feed()):
            yield sent.popleft(), keys

    def span_batches(self, path: str, spans: Iterable[tuple[Any, int, int]]
                     ) -> Iterator[tuple[list, Optional[list]]]:
        """(documents, their `_id` keys or None) per (_, start, stop) byte span of `path`: read,
        cut and checked in the worker processes, so this process only inserts (inline: read
        here, keys None)."""
        if self.workers.n == 0:
            for _, start, stop in spans:
                yield bsonfile.read_span(path, start, stop), None
            return
        yield from self.workers.ordered_map(check_span, ((path, a, b) for _, a, b in spans))

    def planned(self, path: str, segments: list[Segment]) -> Iterator[tuple[Segment, Any]]:
        """`keyed` for an archive's segments planned by the check pass: each one with its
        documents, read from `path` and checked in the worker processes (a new Segment: the
        plan keeps none of them, so memory stays a few batches)."""
        spans = ((path, seg.start, seg.stop) for seg in segments)
        for seg, (docs, keys) in zip(segments, self.span_batches(path, spans)):
            yield Segment(seg.db, seg.collection, docs, seg.eof, seg.start, seg.stop), keys

    # -- collections ---------------------------------------------------------------------------
    def _exists(self, db: str, coll: str) -> bool:
        return bool(self.conn.client[db].list_collection_names(filter={"name": coll}))

    def prepare(self, intent: Intent) -> None:
        """Drop (--drop) and create the target collection or view with its options."""
        client = self.conn.client
        db, coll = intent.target_db, intent.target_coll
        exists = self._exists(db, coll)
        if self.args.drop and exists:
            self.log.always(f"dropping collection {intent.target} before restoring")
            client[db].drop_collection(coll)
            exists = False
        elif exists:
            self.log.always(f"restoring to existing collection {intent.target} without dropping")
            return
        options = {} if self.args.noOptionsRestore or intent.meta is None else dict(intent.meta.options)
        if intent.is_view:
            options = dict(intent.meta.options)       # a view is its options
        id_index = self._id_index(intent)
        if id_index is not None and not intent.is_view:
            options["idIndex"] = id_index
        options.pop("autoIndexId", None)
        self.log.info(f"creating collection {intent.target} "
                      + ("using options from metadata" if options else "with no metadata"))
        try:
            client[db].command("create", coll, **options)
        except Exception as exc:
            raise ToolError(f"error creating collection {intent.target}: {_message(exc)}") from None

    def _id_index(self, intent: Intent) -> Optional[dict]:
        """The dumped `_id` index, when it says more than the default one (a collation of its
        own): mongorestore passes it to create; an ordinary one is left to the server."""
        if intent.meta is None or self.args.noOptionsRestore:
            return None
        for ix in intent.meta.indexes:
            if ix.get("name") == "_id_":
                extra = {k: v for k, v in ix.items() if k not in ("v", "key", "name", "ns")}
                if extra and extra != {"collation": intent.meta.options.get("collation")}:
                    spec = {k: v for k, v in ix.items() if k not in ("v", "ns")}
                    return spec
        return None

    # -- data ----------------------------------------------------------------------------------
    def insert_batches(self, intent: Intent, batches, progress: Progress) -> Result:
        return self.insert_checked(intent, self.keyed(batches, list), progress)

    def insert_checked(self, intent: Intent, batches: Iterable[tuple[list, Optional[list]]],
                       progress: Progress) -> Result:
        """Insert (documents, their `_id` keys or None) batches, in order."""
        coll = self.conn.client[intent.target_db][intent.target_coll]
        ordered = self.args.maintainInsertionOrder
        bypass = True if self.args.bypassDocumentValidation else None
        workers = self.args.numInsertionWorkersPerCollection
        result = Result()

        def send(batch: list, keys: Optional[list]) -> Result:
            return self._insert(coll, intent, batch, keys, ordered, bypass)

        if workers <= 1:
            for batch, keys in batches:
                r = send(batch, keys)
                result.add(r)
                progress.advance(len(batch))
            return result
        with ThreadPoolExecutor(max_workers=workers) as pool:
            pending: list = []
            for batch, keys in batches:
                pending.append((pool.submit(send, batch, keys), len(batch)))
                if len(pending) >= 2 * workers:
                    future, n = pending.pop(0)
                    result.add(future.result())
                    progress.advance(n)
            for future, n in pending:
                result.add(future.result())
                progress.advance(n)
        return result

    def insert_keyed(self, intent: Intent, batch: list, keys: Optional[list],
                     progress: Progress) -> Result:
        """One batch whose documents `keyed` has checked (or not: None)."""
        coll = self.conn.client[intent.target_db][intent.target_coll]
        bypass = True if self.args.bypassDocumentValidation else None
        result = self._insert(coll, intent, batch, keys, self.args.maintainInsertionOrder, bypass)
        progress.advance(len(batch))
        return result

    def _insert(self, coll: Any, intent: Intent, batch: list, keys: Optional[list], ordered: bool,
                bypass: Optional[bool]) -> Result:
        from pymongo.errors import BulkWriteError, PyMongoError
        # checked documents (keys from the workers) are a data directory's alone: a server
        # gets the bytes and checks them itself
        try:
            with collector.paused():
                docs = (checked(batch, keys) if keys is not None and self.conn.embedded
                        else [RawBSONDocument(raw) for raw in batch])
                coll.insert_many(docs, ordered=ordered, bypass_document_validation=bypass)
                del docs        # freed while paused: no collection pass walks them on the way out
            return Result(ok=len(batch))
        except BulkWriteError as exc:
            details = exc.details
            errors = details.get("writeErrors", [])
            fatal = [e for e in errors if e.get("code") not in IGNORABLE_CODES or self.args.stopOnError]
            if fatal:
                raise ToolError(f"{intent.target}: {fatal[0].get('errmsg')}") from None
            for e in errors:
                self.log.always(f"continuing through error: {e.get('errmsg')}")
            if details.get("writeConcernErrors"):
                raise ToolError(f"{intent.target}: write concern error: "
                                f"{details['writeConcernErrors'][0].get('errmsg')}") from None
            return Result(ok=details.get("nInserted", 0), failed=len(errors))
        except PyMongoError as exc:
            raise ToolError(f"{intent.target}: {_message(exc)}") from None

    # -- indexes -------------------------------------------------------------------------------
    def restore_indexes(self, intent: Intent) -> None:
        if intent.meta is None or intent.is_view:
            return
        specs = []
        for ix in intent.meta.indexes:
            if ix.get("name") == "_id_" or dict(ix.get("key", {})) == _ID_KEY:
                continue
            spec = {k: v for k, v in ix.items() if k != "ns"}
            if not self.args.keepIndexVersion:
                spec.pop("v", None)
            specs.append(spec)
        if not specs:
            self.log.info(f"no indexes to restore for collection {intent.target}")
            return
        self.log.always(f"restoring indexes for collection {intent.target} from metadata")
        for spec in specs:
            self.log.info(f"index: {spec.get('name')}")
        try:
            self.conn.client[intent.target_db].command("createIndexes", intent.target_coll,
                                                       indexes=specs)
        except Exception as exc:
            raise ToolError(f"{intent.target}: error creating indexes for {intent.target}: "
                            f"createIndex error: {_message(exc)}") from None


def check_span(job: tuple[str, int, int]) -> tuple[list[bytes], list[Optional[bytes]]]:
    """The documents of one span of a .bson file and their `_id` keys (bsonutil.checked).
    Runs in a worker process."""
    raws = bsonfile.read_span(*job)
    return raws, check_documents(raws)


def _message(exc: BaseException) -> str:
    details = getattr(exc, "details", None)
    if isinstance(details, dict) and details.get("errmsg"):
        return str(details["errmsg"])
    return str(exc)


# -------------------------------------------------------------------------------------- run
def run(args: argparse.Namespace, log: Log) -> int:
    check_arguments(args)
    spool = None
    plan: Optional[list[Segment]] = None
    try:
        if args.archive is not None:
            if args.archive == "-":
                spool = _spool_stdin(args.gzip)
            intents, plan = archive_intents(args, log, spool)
        else:
            intents = directory_intents(args, log)
            check_files(intents, args, log)
        _check_conflicts(intents)
        if args.dryRun:
            for intent in intents:
                log.always(f"would restore {intent.source} to {intent.target} "
                           f"({plural(intent.count, 'document')})")
            log.always("dry run completed")
            return 0
        conn = connect(args, log, create=True)
        try:
            result = _restore(conn, args, intents, spool, log, plan)
        finally:
            conn.close()
    finally:
        if spool is not None:
            spool.close()
    log.always(f"{result.ok} document(s) restored successfully. {result.failed} document(s) "
               "failed to restore.")
    return 0


def _check_conflicts(intents: list[Intent]) -> None:
    seen: dict[str, str] = {}
    for intent in intents:
        other = seen.get(intent.target)
        if other is not None:
            raise ToolError(f"cannot restore with conflicting namespace destinations: {other} "
                            f"and {intent.source} both map to {intent.target}")
        seen[intent.target] = intent.source


def _restore(conn: Connection, args: argparse.Namespace, intents: list[Intent],
             spool: Optional[BinaryIO], log: Log, plan: Optional[list[Segment]] = None) -> Result:
    documents = sum(i.count for i in intents)
    with Workers(workers_for(documents, CHECK_WORKERS) if conn.embedded else 0) as workers:
        return _restore_with(Restorer(conn, args, log, workers), args, intents, spool, log, plan)


def _restore_with(restorer: Restorer, args: argparse.Namespace, intents: list[Intent],
                  spool: Optional[BinaryIO], log: Log,
                  plan: Optional[list[Segment]] = None) -> Result:
    collections = [i for i in intents if not i.is_view]
    views = [i for i in intents if i.is_view]
    total = Result()
    if args.archive is not None:
        total = _restore_archive(restorer, args, collections, spool, log, plan)
    else:
        total = _restore_directory(restorer, args, collections, log)
    for view in views:
        log.always(f"restoring view {view.target}")
        restorer.prepare(view)
    if not args.noIndexRestore:
        for intent in collections:
            restorer.restore_indexes(intent)
    return total


def _restore_directory(restorer: Restorer, args: argparse.Namespace, intents: list[Intent],
                       log: Log) -> Result:
    def work(intent: Intent) -> Result:
        restorer.prepare(intent)
        if intent.data_path is None:
            return Result()
        log.always(f"restoring {intent.target} from {intent.data_path}")
        if intent.spans is not None:
            with Progress(log, intent.target, intent.count) as progress:
                spans = ((n, start, stop) for start, stop, n in intent.spans)
                result = restorer.insert_checked(
                    intent, restorer.span_batches(intent.data_path, spans), progress)
        else:
            with bsonfile.open_input(intent.data_path, args.gzip) as stream, \
                    Progress(log, intent.target, intent.count) as progress:
                result = restorer.insert_batches(
                    intent, bsonfile.batches(stream, intent.data_path, args.batchSize), progress)
        log.always(f"finished restoring {intent.target} ({plural(result.ok, 'document')}, "
                   f"{plural(result.failed, 'failure')})")
        return result

    # largest first, as mongorestore's longest-task-first order
    ordered = sorted(intents, key=lambda i: -i.count)
    total = Result()
    jobs = args.numParallelCollections
    if jobs <= 1 or len(ordered) <= 1:
        for intent in ordered:
            total.add(work(intent))
        return total
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(work, i) for i in ordered]
        error = None
        for f in futures:
            try:
                total.add(f.result())
            except ToolError as exc:
                error = error or exc
        if error is not None:
            raise error
    return total


def _restore_archive(restorer: Restorer, args: argparse.Namespace, intents: list[Intent],
                     spool: Optional[BinaryIO], log: Log,
                     plan: Optional[list[Segment]] = None) -> Result:
    """Segments in archive order; each collection is created when its first segment comes.
    With the check pass's `plan`, the workers read the segments' documents from the file."""
    by_ns = {(i.db, i.coll): i for i in intents}
    stream, name = (None, args.archive) if plan is not None else _open_archive(args, spool)
    total = Result()
    started: dict[tuple[str, str], tuple[Result, Progress]] = {}
    try:
        if plan is not None:
            wanted = [seg for seg in plan if (seg.db, seg.collection) in by_ns]
            keyed = restorer.planned(args.archive, wanted)
        else:
            reader = ArchiveReader(stream, name, args.batchSize, bsonfile.RAMP_FIRST)
            reader.read_prelude()
            keyed = restorer.keyed((seg for seg in reader.segments()
                                    if (seg.db, seg.collection) in by_ns), lambda seg: seg.docs)
        for seg, keys in keyed:
            key = (seg.db, seg.collection)
            intent = by_ns[key]
            if key not in started:
                restorer.prepare(intent)
                log.always(f"restoring {intent.target} from {name}")
                started[key] = (Result(), Progress(log, intent.target, intent.count))
            result, progress = started[key]
            if seg.docs:
                result.add(restorer.insert_keyed(intent, seg.docs, keys, progress))
            if seg.eof:
                progress.close()
                log.always(f"finished restoring {intent.target} ({plural(result.ok, 'document')}"
                           f", {plural(result.failed, 'failure')})")
                total.add(result)
        for key, intent in by_ns.items():
            if key not in started:
                restorer.prepare(intent)
    finally:
        for _, progress in started.values():
            progress.close()
        if stream is not None and stream is not spool:
            stream.close()
    return total
