"""`$changeStream`: its options, where a stream starts, and the cursor that reads the oplog.

A `ChangeStreamCursor` keeps a position in the oplog (the next record id) and, per batch, scans
forward on a fresh snapshot: relevant entries become events (change_events.py), images are added,
the later pipeline stages run on each event, and every reply carries a postBatchResumeToken. An
awaitData getMore that finds nothing waits on the engine's commit signal. Design:
docs/design/change-streams.md.
"""
from __future__ import annotations

import collections
import time
from dataclasses import dataclass
from typing import Any, Optional

import bson
from bson import _dict_to_bson
from bson.codec_options import DEFAULT_CODEC_OPTIONS
from bson.raw_bson import RawBSONDocument
from bson.timestamp import Timestamp

from ..bsonutil.delta import apply_diff
from ..errors import CommandError, ErrorCode
from ..limits import MAX_BSON_OBJECT_SIZE
from . import oplog as O
from . import plan_builder as Q
from .batch import read_numbers
from .change_events import PRE_IMAGE_OPS, Event, StreamScope, events_of
from .cursors import ServerCursor
from .preimages import lookup as lookup_preimage
from .resume_tokens import ResumeToken, decode_token

FULL_DOCUMENT = ("default", "updateLookup", "whenAvailable", "required")
FULL_DOCUMENT_BEFORE_CHANGE = ("off", "whenAvailable", "required")
#: the stages mongod 7.0 allows after $changeStream
ALLOWED_STAGES = frozenset({"$match", "$project", "$addFields", "$set", "$unset", "$replaceRoot",
                            "$replaceWith", "$redact"})
_SPEC_FIELDS = frozenset({"fullDocument", "fullDocumentBeforeChange", "resumeAfter", "startAfter",
                          "startAtOperationTime", "showExpandedEvents", "allChangesForCluster",
                          "showRawUpdateDescription", "showSystemEvents"})
DEFAULT_AWAIT_SECONDS = 1.0
#: how often a stream held at the majority commit point looks again (a secondary learns the
#: point from heartbeats, which signal no commit)
HELD_POLL_SECONDS = 0.02


@dataclass
class StreamSpec:
    full_document: str = "default"
    before_change: str = "off"
    resume_after: Optional[ResumeToken] = None
    start_after: Optional[ResumeToken] = None
    start_at: Optional[Timestamp] = None
    show_expanded: bool = False
    all_changes_for_cluster: bool = False
    raw_update_description: bool = False


def _type_name(value: Any) -> str:
    from ..bsonutil.types import type_name
    return type_name(value)


def _wrong_type(field: str, value: Any, expected: str) -> CommandError:
    return CommandError(ErrorCode.TypeMismatch,
                        f"BSON field '$changeStream.{field}' is the wrong type '{_type_name(value)}', "
                        f"expected type '{expected}'")


def parse_spec(spec: Any) -> StreamSpec:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"the $changeStream stage must be an object, but found {_type_name(spec)}")
    out = StreamSpec()
    for field, value in spec.items():
        if field not in _SPEC_FIELDS:
            raise CommandError(ErrorCode.IDLUnknownField, f"BSON field '$changeStream.{field}' is an unknown field.")
        if field in ("fullDocument", "fullDocumentBeforeChange"):
            allowed = FULL_DOCUMENT if field == "fullDocument" else FULL_DOCUMENT_BEFORE_CHANGE
            if not isinstance(value, str):
                raise _wrong_type(field, value, "string")
            if value not in allowed:
                raise CommandError(ErrorCode.BadValue, f"Enumeration value '{value}' for field "
                                                       f"'$changeStream.{field}' is not a valid value.")
            if field == "fullDocument":
                out.full_document = value
            else:
                out.before_change = value
        elif field in ("resumeAfter", "startAfter"):
            token = decode_token(value, field)
            if field == "resumeAfter":
                out.resume_after = token
            else:
                out.start_after = token
        elif field == "startAtOperationTime":
            if not isinstance(value, Timestamp):
                raise _wrong_type(field, value, "timestamp")
            out.start_at = value
        else:
            if not isinstance(value, bool):
                raise _wrong_type(field, value, "bool")
            if field == "showExpandedEvents":
                out.show_expanded = value
            elif field == "allChangesForCluster":
                out.all_changes_for_cluster = value
            elif field == "showRawUpdateDescription":
                out.raw_update_description = value
            elif value:   # showSystemEvents
                raise CommandError(ErrorCode.NotImplemented,
                                   "$changeStream with 'showSystemEvents' is not supported by ginkgodb")
    if sum(x is not None for x in (out.resume_after, out.start_after, out.start_at)) > 1:
        raise CommandError(ErrorCode.ChangeStreamResumeOptionsConflict,
                           "Only one type of resume option is allowed, but multiple were found.")
    if out.resume_after is not None and out.resume_after.from_invalidate:
        raise CommandError(ErrorCode.InvalidResumeToken,
                           "Attempting to resume a change stream using 'resumeAfter' is not allowed from an "
                           "invalidate notification.")
    return out


def scope_of(engine: Any, db: str, coll: Optional[str], spec: StreamSpec) -> StreamScope:
    """The stream's kind from where it is opened, with mongod's refusals."""
    if not engine.oplog.enabled:
        raise CommandError(ErrorCode.ChangeStreamNotAllowed,
                           "The $changeStream stage needs the oplog, which this data directory was opened "
                           "without")
    if spec.all_changes_for_cluster:
        if db != "admin" or coll is not None:
            raise CommandError(ErrorCode.InvalidNamespace,
                               "A $changeStream with 'allChangesForCluster:true' may only be opened on the "
                               "'admin' database, and with no collection name")
        return StreamScope("cluster", db, None, spec.show_expanded)
    if db in ("admin", "config", "local"):
        raise CommandError(ErrorCode.InvalidNamespace,
                           f"$changeStream may not be opened on the internal {db} database")
    if coll is None:
        return StreamScope("database", db, None, spec.show_expanded)
    if coll.startswith("system."):
        raise CommandError(ErrorCode.InvalidNamespace,
                           f"$changeStream may not be opened on the internal {db}.{coll} collection")
    meta = engine.catalog.get(db, coll)
    if meta is not None and meta.is_view:
        raise CommandError(ErrorCode.CommandNotSupportedOnView,
                           f"Namespace {db}.{coll} is a view, not a collection")
    return StreamScope("collection", db, coll, spec.show_expanded)


def check_stages(stages: list) -> None:
    """mongod parses every stage first (unknown ones: 40324), then allows only some."""
    from ..query.pipeline import STAGES
    for stage in stages:
        name = next(iter(stage))
        if name == "$changeStream":
            raise CommandError(ErrorCode.StageOnlyValidFirst,
                               "$changeStream is only valid as the first stage in a pipeline")
        if name not in STAGES and name not in ALLOWED_STAGES:
            from ..query.pipeline.core import ENGINE_STAGES
            if name not in ENGINE_STAGES and name != "$changeStreamSplitLargeEvent":
                raise CommandError(ErrorCode.UnrecognizedPipelineStage,
                                   f"Unrecognized pipeline stage name: '{name}'")
    for stage in stages:
        name = next(iter(stage))
        if name == "$changeStreamSplitLargeEvent":
            raise CommandError(ErrorCode.NotImplemented,
                               "$changeStreamSplitLargeEvent is not supported by ginkgodb")
        if name not in ALLOWED_STAGES:
            raise CommandError(ErrorCode.IllegalOperation, f"{name} is not permitted in a $changeStream pipeline")


def _encode_in_order(doc: dict) -> bytes:
    """BSON keeping the event's field order (bson.encode moves `_id` first; mongod puts `to`,
    `txnNumber` and `lsid` before it)."""
    return _dict_to_bson(doc, False, DEFAULT_CODEC_OPTIONS, False)


def _fatal(code: ErrorCode, message: str) -> CommandError:
    """An error a stream cannot resume from: mongod labels them so drivers do not retry."""
    return CommandError(code, message, labels=("NonResumableChangeStreamError",))


def _next_ts(ts: Timestamp) -> Timestamp:
    return Timestamp(ts.time, ts.inc + 1) if ts.inc < 0xFFFFFFFF else Timestamp(ts.time + 1, 0)


class ChangeStreamCursor(ServerCursor):
    """A tailable, awaitData cursor of change events."""

    def __init__(self, engine: Any, ns: str, scope: StreamScope, spec: StreamSpec, pipeline: Any) -> None:
        super().__init__(ns, iter(()), None)
        self._engine = engine
        self.scope = scope
        self.spec = spec
        self._pipeline = pipeline
        self._queue: collections.deque[Event] = collections.deque()
        self._find: Optional[ResumeToken] = None       # a token whose event must be found and skipped
        self._closing = False
        self._held = False      # the last fill stopped at an entry not yet majority-committed
        self.await_data = True
        self._position(spec)
        self.post_batch_resume_token = ResumeToken.high_water_mark(self._hwm).to_document()

    # ------------------------------------------------------------------ where the stream starts
    def _position(self, spec: StreamSpec) -> None:
        engine = self._engine
        with engine.read() as view:
            coll = view.collection(O.DB, O.COLL)
            if coll is None:
                raise CommandError(ErrorCode.ChangeStreamNotAllowed, "the oplog does not exist")
            snap = view.snapshot
            next_rid = read_numbers(snap, coll.meta.id).next_rid
            token = spec.resume_after or spec.start_after
            start = token.ts if token is not None else spec.start_at
            if start is None:
                last = O.last_entry(snap, coll)
                self._rid = next_rid
                self._hwm = _next_ts(O.entry_ts(last[1])) if last is not None else engine.clock.now()
                return
            first = O.first_entry(snap, coll)
            if first is not None and first[0] > 1 and start < O.entry_ts(first[1]):
                raise _fatal(ErrorCode.ChangeStreamHistoryLost,
                                   "Resume of change stream was not possible, as the resume point may no "
                                   "longer be in the oplog.")
            found = O.rid_at_or_after(snap, coll, start)
            self._rid = found if found is not None else next_rid
            self._hwm = start
            if token is not None and token.is_event:
                self._find = token

    # ------------------------------------------------------------------ batches
    @property
    def invalidated(self) -> bool:
        return self._closing and self.exhausted

    def next_batch(self, size: Optional[int], ctx: Any = None, await_seconds: float = 0.0) -> list:
        if self.exhausted:
            return []
        signal = self._engine.commit_signal
        deadline = time.monotonic() + await_seconds
        while True:
            seen = signal.generation
            batch = self._fill(size, ctx)
            if batch or self.exhausted:
                break
            left = deadline - time.monotonic()
            if left <= 0 or self._engine._closed:
                break
            signal.wait(seen, min(left, HELD_POLL_SECONDS) if self._held else left)
            if ctx is not None:
                ctx.check_interrupt()
        self.n_returned += len(batch)
        self.last_used = time.monotonic()
        return batch

    def _fill(self, size: Optional[int], ctx: Any) -> list:
        out: list[RawBSONDocument] = []
        nbytes = 0
        limit = size if size is not None else 0
        reader = self._engine.reader()
        reader.open()
        try:
            coll = reader.catalog.collection(O.DB, O.COLL)
            if coll is None:
                raise _fatal(ErrorCode.ChangeStreamHistoryLost, "the oplog was dropped")
            self._check_not_lost(reader, coll)
            scan = O.entries_from(reader.txn, coll, self._rid)
            committed = self._engine.oplog.majority_committed
            horizon = committed() if committed is not None else None
            self._held = False
            while True:
                while self._queue:
                    if limit and len(out) >= limit:
                        return out
                    event = self._queue[0]
                    docs = self._emit(event, reader)
                    self._queue.popleft()
                    for doc in docs:
                        raw = _encode_in_order(doc)
                        if out and nbytes + len(raw) > MAX_BSON_OBJECT_SIZE:
                            self._queue.appendleft(event)   # sent in the next batch
                            return out
                        out.append(RawBSONDocument(raw))
                        nbytes += len(raw)
                    self.post_batch_resume_token = event.token.to_document()
                    if self._closing:
                        self.exhausted = True
                        return out
                if limit and len(out) >= limit:
                    return out
                step = next(scan, None)
                if step is None:
                    self.post_batch_resume_token = ResumeToken.high_water_mark(self._hwm).to_document()
                    return out
                rid, raw = step
                if horizon is not None and O.entry_ts(raw) > horizon:
                    self._held = True       # mongod's streams read majority-committed data only
                    return out
                self._rid = rid + 1
                entry = bson.decode(raw)
                ts = entry["ts"]
                if self._find is not None and ts > self._find.ts:
                    self._not_found()
                self._queue.extend(events_of(entry, self.scope))
                self._hwm = _next_ts(ts)
                if not self._queue:
                    self.post_batch_resume_token = ResumeToken.high_water_mark(self._hwm).to_document()
                if ctx is not None and not rid & 255:
                    ctx.check_interrupt()
        finally:
            reader.close()

    def _check_not_lost(self, reader: Any, coll: Any) -> None:
        first = O.first_entry(reader.txn, coll)
        if first is not None and first[0] > self._rid:
            raise _fatal(ErrorCode.ChangeStreamHistoryLost,
                               "Resume of change stream was not possible, as the resume point may no longer "
                               "be in the oplog.")

    def _not_found(self) -> None:
        token = self._find
        assert token is not None
        raise _fatal(ErrorCode.ChangeStreamFatalError,
                           f"cannot resume stream; the resume token was not found. {token.to_document()}")

    def _emit(self, event: Event, reader: Any) -> list[dict]:
        """The event's documents out of the later stages ([] when skipped or filtered)."""
        find = self._find
        if find is not None:
            here, wanted = event.token.position(), find.position()
            if here < wanted:
                return []
            if here > wanted or event.token.uuid != find.uuid or event.token.event_id != find.event_id:
                self._not_found()
            self._find = None
            return []
        if event.invalidate:
            self._closing = True
        doc = self._document(event, reader)
        results = list(self._pipeline([doc])) if self._pipeline is not None else [doc]
        expected = doc["_id"]
        for result in results:
            found = result.get("_id", "missing") if isinstance(result, dict) else "missing"
            if found != expected:
                raise _fatal(ErrorCode.ChangeStreamFatalError,
                                   "Encountered an event whose _id field, which contains the resume token, was "
                                   "modified by the pipeline. Modifying the _id field of an event makes it "
                                   "impossible to resume the stream from that point. Only transformations that "
                                   "retain the unmodified _id field are allowed. Expected: "
                                   f"{{_id: {expected}}} but found: {{_id: {found}}}")
        return results

    # ------------------------------------------------------------------ images
    def _document(self, event: Event, reader: Any) -> dict:
        spec = self.spec
        op = event.operation
        full: Any = ...
        before: Any = ...
        if spec.raw_update_description and event.diff is not None:
            event.update_description = None
        pre_image: Any = ...
        if op in PRE_IMAGE_OPS and spec.before_change != "off":
            pre_image = self._pre_image(event, reader)
            if pre_image is None and spec.before_change == "required":
                raise CommandError(ErrorCode.NoMatchingDocument,
                                   "Change stream was configured to require a pre-image for all update, delete "
                                   "and replace events, but the pre-image was not found for event: "
                                   f"{self._image_id(event)}")
            before = pre_image
        if op == "update" and spec.full_document != "default":
            if spec.full_document == "updateLookup":
                full = self._lookup(event, reader)
            else:
                base = pre_image if pre_image is not ... else self._pre_image(event, reader)
                full = apply_diff(base, event.diff) if base is not None else None
                if full is None and spec.full_document == "required":
                    raise CommandError(ErrorCode.NoMatchingDocument,
                                       "Change stream was configured to require a post-image for all update "
                                       "events, but the post-image was not found for event: "
                                       f"{self._image_id(event)}")
        doc = event.document(self.scope, full, before)
        if spec.raw_update_description and event.diff is not None:
            doc["rawUpdateDescription"] = {"$v": 2, "diff": event.diff}
        return doc

    def _image_id(self, event: Event) -> dict:
        ts, index = event.image_key or (event.ts, 0)
        return {"nsUUID": event.uuid, "ts": ts, "applyOpsIndex": index}

    def _pre_image(self, event: Event, reader: Any) -> Optional[dict]:
        if event.uuid is None or event.image_key is None:
            return None
        ts, index = event.image_key
        return lookup_preimage(reader, event.uuid, ts, index)

    def _lookup(self, event: Event, reader: Any) -> Optional[dict]:
        """updateLookup: the document as it is now, in the collection of the event's UUID."""
        ns = event.ns or {}
        coll = reader.catalog.collection(ns.get("db"), ns.get("coll"))
        if coll is None or coll.meta.uuid != event.uuid or not isinstance(event.document_key, dict):
            return None
        built = Q.build(coll, reader, Q.FindRequest(filter=dict(event.document_key), limit=1))
        for _, raw, doc in built.root.rows():
            return doc if doc is not None else bson.decode(raw)
        return None

    def close(self) -> None:
        self.exhausted = True
        if self.on_close is not None:
            self.on_close(self)
            self.on_close = None
