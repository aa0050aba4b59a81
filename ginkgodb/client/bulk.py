"""Bulk writes: pymongo's InsertOne/UpdateOne/... models -> batched insert/update/delete commands.

Operations are grouped into runs of one kind (consecutive ones when ordered; all inserts, then
updates, then deletes when unordered), each run is split into batches within the server's
limits, and the replies are merged into pymongo's bulk result document
{writeErrors, writeConcernErrors, nInserted, nUpserted, nMatched, nModified, nRemoved, upserted}
with every index mapped back to the caller's operation index.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from itertools import accumulate, repeat
from operator import attrgetter, itemgetter
from typing import Any, Optional

from bson import _dict_to_bson  # type: ignore[attr-defined]
from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument
from pymongo.errors import ConfigurationError, DocumentTooLarge, InvalidOperation, OperationFailure
from pymongo.write_concern import WriteConcern

from ..bsonutil.checked import vouch_all
from ..limits import MAX_BSON_OBJECT_SIZE, MAX_MESSAGE_SIZE, MAX_WRITE_BATCH_SIZE
from .codec import encode_and_size, encode_insert, plain_reply, wire_value
from .plain import plain_codec
from .raising import raise_bulk_write_error, write_concern_error_of
from .session import check_session_for_write
from .validation import all_raw_documents, validate_is_document_type, validate_ok_for_replace, validate_ok_for_update

INSERT, UPDATE, DELETE = 0, 1, 2
COMMAND_NAMES = ("insert", "update", "delete")
SEQUENCE_FIELDS = ("documents", "updates", "deletes")
_COMMAND_OVERHEAD = 16_382


class Run:
    """Consecutive operations of one kind, remembering each one's original index."""

    def __init__(self, op_type: int) -> None:
        self.op_type = op_type
        self.index_map: Sequence[int] = []
        self.ops: list[Any] = []

    def add(self, original_index: int, operation: Any) -> None:
        self.index_map.append(original_index)  # type: ignore[attr-defined]
        self.ops.append(operation)


def new_result() -> dict:
    """An empty bulk result in pymongo's shape."""
    return {"writeErrors": [], "writeConcernErrors": [], "nInserted": 0, "nUpserted": 0,
            "nMatched": 0, "nModified": 0, "nRemoved": 0, "upserted": []}


def merge_reply(run: Run, full: dict, offset: int, result: Mapping[str, Any]) -> None:
    """Add one batch's reply (its statements start at `offset` within `run`) to `full`."""
    affected = result.get("n", 0)
    if run.op_type == INSERT:
        full["nInserted"] += affected
    elif run.op_type == DELETE:
        full["nRemoved"] += affected
    else:
        upserted = result.get("upserted")
        if upserted:
            for doc in upserted:
                doc["index"] = run.index_map[doc["index"] + offset]
            full["upserted"].extend(upserted)
            full["nUpserted"] += len(upserted)
            full["nMatched"] += affected - len(upserted)
        else:
            full["nMatched"] += affected
        full["nModified"] += result.get("nModified", 0)
    for error in result.get("writeErrors") or ():
        entry = dict(error)
        idx = error["index"] + offset
        entry["index"] = run.index_map[idx]
        entry["op"] = run.ops[idx]
        full["writeErrors"].append(entry)
    wce = write_concern_error_of(result)
    if wce:
        full["writeConcernErrors"].append(wce)


class Bulk:
    """Collects write operations for one collection and executes them as write commands.

    pymongo's operation models add themselves through add_insert/add_update/add_replace/
    add_delete, so `bulk_write` accepts pymongo.InsertOne & co. unchanged.
    """

    def __init__(self, collection: Any, ordered: bool, bypass_document_validation: Optional[bool],
                 comment: Any = None, let: Any = None) -> None:
        if let is not None:
            validate_is_document_type("let", let)
        self.collection = collection
        self.ordered = ordered
        self.bypass_doc_val = bypass_document_validation
        self.comment = comment
        self.let = let
        self.ops: list[tuple[int, Any]] = []
        self.executed = False
        self.uses_collation = self.uses_array_filters = self.uses_sort = False

    # -------------------------------------------------------------- building (pymongo's protocol)
    def add_insert(self, document: Any) -> None:
        validate_is_document_type("document", document)
        if not (isinstance(document, RawBSONDocument) or "_id" in document):
            document["_id"] = ObjectId()
        self.ops.append((INSERT, document))

    def add_update(self, selector: Mapping, update: Any, multi: bool, upsert: Optional[bool],
                   collation: Any = None, array_filters: Any = None, hint: Any = None,
                   sort: Any = None) -> None:
        validate_ok_for_update(update)
        stmt: dict = {"q": selector, "u": update, "multi": multi}
        self._add_statement(UPDATE, stmt, upsert, collation, hint, sort, array_filters)

    def add_replace(self, selector: Mapping, replacement: Any, upsert: Optional[bool],
                    collation: Any = None, hint: Any = None, sort: Any = None) -> None:
        validate_ok_for_replace(replacement)
        self._add_statement(UPDATE, {"q": selector, "u": replacement}, upsert, collation, hint,
                            sort, None)

    def add_delete(self, selector: Mapping, limit: int, collation: Any = None,
                   hint: Any = None) -> None:
        self._add_statement(DELETE, {"q": selector, "limit": limit}, None, collation, hint,
                            None, None)

    def _add_statement(self, op_type: int, stmt: dict, upsert: Optional[bool], collation: Any,
                       hint: Any, sort: Any, array_filters: Any) -> None:
        if upsert is not None:
            stmt["upsert"] = upsert
        if collation is not None:
            self.uses_collation = True
            stmt["collation"] = collation
        if array_filters is not None:
            self.uses_array_filters = True
            stmt["arrayFilters"] = array_filters
        if hint is not None:
            stmt["hint"] = hint
        if sort is not None:
            self.uses_sort = True
            stmt["sort"] = sort
        self.ops.append((op_type, stmt))

    # -------------------------------------------------------------- executing
    def runs(self) -> Iterator[Run]:
        if len(set(map(itemgetter(0), self.ops))) == 1:    # insert_many: one run, at C speed
            run = Run(self.ops[0][0])
            run.index_map = range(len(self.ops))
            run.ops = list(map(itemgetter(1), self.ops))
            yield run
            return
        if self.ordered:
            run: Optional[Run] = None
            for idx, (op_type, op) in enumerate(self.ops):
                if run is None or run.op_type != op_type:
                    if run is not None:
                        yield run
                    run = Run(op_type)
                run.add(idx, op)
            if run is not None:
                yield run
            return
        grouped = [Run(INSERT), Run(UPDATE), Run(DELETE)]
        for idx, (op_type, op) in enumerate(self.ops):
            grouped[op_type].add(idx, op)
        yield from (run for run in grouped if run.ops)

    def execute(self, write_concern: WriteConcern, session: Any) -> Optional[dict]:
        """Run every operation; the merged result, or None for unacknowledged writes."""
        if not self.ops:
            raise InvalidOperation("No operations to execute")
        if self.executed:
            raise InvalidOperation("Bulk operations can only be executed once.")
        self.executed = True
        check_session_for_write(session, write_concern)
        if not write_concern.acknowledged:
            self._execute_unacknowledged(write_concern)
            return None
        full = new_result()
        self._execute_runs(full, write_concern, session, ordered=self.ordered)
        if full["writeErrors"] or full["writeConcernErrors"]:
            raise_bulk_write_error(full)
        return full

    def _execute_runs(self, full: dict, write_concern: WriteConcern, session: Any,
                      ordered: bool, final_write_concern: Optional[WriteConcern] = None) -> None:
        runs = list(self.runs())
        for run in runs:
            offset = 0
            while offset < len(run.ops):
                concern = write_concern
                if final_write_concern and run is runs[-1] and len(run.ops) - offset == 1:
                    concern = final_write_concern   # pymongo sends the last write as asked
                statements = self._batch(run, offset, concern.acknowledged)
                reply = self._send(run.op_type, statements, concern, session, ordered)
                merge_reply(run, full, offset, plain_reply(reply, self._reply_options()))
                offset += len(statements)
                if ordered and reply.get("writeErrors"):
                    break
            if ordered and full["writeErrors"]:
                return

    def _execute_unacknowledged(self, write_concern: WriteConcern) -> None:
        if self.uses_collation:
            raise ConfigurationError("Collation is unsupported for unacknowledged writes.")
        if self.uses_array_filters:
            raise ConfigurationError("arrayFilters is unsupported for unacknowledged writes.")
        if self.uses_sort:
            raise ConfigurationError("Must be connected to MongoDB 8.0+ to use sort on "
                                     "unacknowledged update commands.")
        if self.bypass_doc_val:
            raise OperationFailure("Cannot set bypass_document_validation with unacknowledged "
                                   "write concern")
        if self.ordered:
            # as pymongo: ordered unacknowledged writes run acknowledged so they can stop at
            # the first error, and every outcome is discarded
            try:
                self._execute_runs(new_result(), WriteConcern(), None, ordered=True,
                                   final_write_concern=write_concern)
            except OperationFailure:
                pass
            return
        for run in self.runs():
            offset = 0
            while offset < len(run.ops):
                statements = self._batch(run, offset, acknowledged=False)
                self._send(run.op_type, statements, write_concern, None, ordered=False)
                offset += len(statements)

    def _batch(self, run: Run, offset: int, acknowledged: bool) -> list:
        """Wire-ready statements of `run` from `offset`, within the batch count and size limits."""
        opts = self.collection.codec_options
        limit = MAX_MESSAGE_SIZE - _COMMAND_OVERHEAD
        ops = run.ops[offset:offset + MAX_WRITE_BATCH_SIZE]
        encode: Any = encode_and_size
        if run.op_type == INSERT:
            if all_raw_documents(ops):
                return _raw_batch(ops, acknowledged, limit)
            plain = plain_codec(opts)   # once for the batch
            if plain and type(ops) is list and set(map(type, ops)) == _DICTS_ONLY:
                return _dict_batch(ops, opts, acknowledged, limit)
            encode = partial(_encode_insert, plain=plain)
        statements: list = []
        total = 0
        for op in ops:
            stmt, size = encode(op, opts)
            if (not acknowledged and size > MAX_BSON_OBJECT_SIZE) or (
                    size > MAX_MESSAGE_SIZE and not statements):
                raise _too_large(run.op_type, size)
            if total + size > limit and statements:
                break
            statements.append(stmt)
            total += size
        return statements

    def _send(self, op_type: int, statements: list, write_concern: WriteConcern, session: Any,
              ordered: bool) -> Mapping[str, Any]:
        opts = self.collection.codec_options
        cmd: dict = {COMMAND_NAMES[op_type]: self.collection.name, "ordered": ordered}
        if self.comment:
            cmd["comment"] = wire_value(self.comment, opts)
        if self.bypass_doc_val is not None:
            cmd["bypassDocumentValidation"] = self.bypass_doc_val
        if self.let is not None and op_type in (DELETE, UPDATE):
            cmd["let"] = wire_value(self.let, opts)
        cmd[SEQUENCE_FIELDS[op_type]] = statements
        client = self.collection.database.client
        return client._runner.run(self.collection.database.name, cmd, codec_options=opts,
                                  session=session, write_concern=write_concern, encoded=True)

    def _reply_options(self) -> Any:
        return self.collection.codec_options.with_options(document_class=dict,
                                                          unicode_decode_error_handler="replace")


def _encode_insert(document: Any, codec_options: Any, plain: Optional[bool] = None) -> tuple[RawBSONDocument, int]:
    """A document to insert as RawBSONDocument, and its size."""
    if type(document) is not dict and isinstance(document, RawBSONDocument):
        return document, len(document.raw)
    encoded = encode_insert(document, codec_options, plain)
    return encoded, len(encoded.raw)


_DICTS_ONLY = {dict}
#: documents encoded at a time by `_dict_batch`: a batch cut short by the size limit encodes at
#: most this many beyond its last statement
_ENCODE_CHUNK = 256


def _dict_batch(docs: list, opts: Any, acknowledged: bool, limit: int) -> list:
    """`Bulk._batch` of plain documents with plain codec options: encoded a chunk at a time,
    then cut exactly as the loop cuts (the same limits and errors, checked per size), and
    vouched for in bulk (bsonutil.checked.vouch_all)."""
    statements: list = []
    total = 0
    for start in range(0, len(docs), _ENCODE_CHUNK):
        chunk = docs[start:start + _ENCODE_CHUNK]
        raws = list(map(_dict_to_bson, chunk, repeat(False), repeat(opts)))
        taken = 0
        for size in map(len, raws):
            if (not acknowledged and size > MAX_BSON_OBJECT_SIZE) or (
                    size > MAX_MESSAGE_SIZE and not statements and not taken):
                raise _too_large(INSERT, size)
            if total + size > limit and (statements or taken):
                break
            taken += 1
            total += size
        statements += vouch_all(raws[:taken], chunk[:taken])
        if taken < len(raws):
            break
    return statements


def _raw_batch(docs: list, acknowledged: bool, limit: int) -> list:
    """`Bulk._batch` of RawBSONDocuments (sent as they are): the same cut and the same errors,
    from their sizes added up at C speed rather than one statement at a time."""
    sizes = list(map(len, map(_raw, docs)))
    # the statements whose running total stays within the limit; the first one always goes
    cut = max(1, bisect_right(list(accumulate(sizes)), limit))
    if sizes[0] > MAX_MESSAGE_SIZE:
        raise _too_large(INSERT, sizes[0])
    if not acknowledged:        # checked up to the statement that ends the batch, included
        big = next((size for size in sizes[:cut + 1] if size > MAX_BSON_OBJECT_SIZE), None)
        if big is not None:
            raise _too_large(INSERT, big)
    return docs[:cut]


_raw = attrgetter("raw")


def _too_large(op_type: int, size: int) -> DocumentTooLarge:
    if op_type == INSERT:
        return DocumentTooLarge(f"BSON document too large ({size} bytes) - the connected server "
                                f"supports BSON document sizes up to {MAX_BSON_OBJECT_SIZE} bytes.")
    return DocumentTooLarge(f"{COMMAND_NAMES[op_type]} command document too large")
