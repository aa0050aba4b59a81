"""ChangeStream: what `watch()` returns, with pymongo's API and resume rules.

Built on the same commands a driver sends: `aggregate` with a leading `$changeStream` stage, then
`getMore` with `maxTimeMS` = `max_await_time_ms` (the engine waits for a commit that long). The
stream caches a resume token (the last event's `_id`, or the batch's `postBatchResumeToken`) and,
after a resumable error (CursorNotFound, or the `ResumableChangeStreamError` label), opens a new
cursor with `resumeAfter` (or `startAfter`, if that is how it started and no event came yet) once,
as pymongo does (docs/design/change-streams.md).
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Optional

from pymongo.errors import ConnectionFailure, CursorNotFound, InvalidOperation, OperationFailure, PyMongoError

from .aggregation import aggregate
from .command_cursor import CommandCursor
from .validation import validate_list


def _resumable(exc: PyMongoError) -> bool:
    if isinstance(exc, (ConnectionFailure, CursorNotFound)):
        return True
    if isinstance(exc, OperationFailure):
        return exc.has_error_label("ResumableChangeStreamError")
    return False


class ChangeStream:
    """A change stream on a collection, a database or the whole client (pymongo's ChangeStream)."""

    def __init__(self, target: Any, kind: str, pipeline: Any = None, full_document: Optional[str] = None,
                 resume_after: Optional[Mapping] = None, max_await_time_ms: Optional[int] = None,
                 batch_size: Optional[int] = None, collation: Any = None,
                 start_at_operation_time: Any = None, session: Any = None,
                 start_after: Optional[Mapping] = None, comment: Any = None,
                 full_document_before_change: Optional[str] = None,
                 show_expanded_events: Optional[bool] = None) -> None:
        pipeline = validate_list("pipeline", [] if pipeline is None else pipeline)
        if full_document is not None and not isinstance(full_document, str):
            raise TypeError(f"full_document must be an instance of str, not {type(full_document)}")
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 0):
            raise ValueError("batchSize must be greater than or equal to 0") if isinstance(batch_size, int) \
                else TypeError(f"batchSize must be an integer, not {type(batch_size)}")
        self._target = target
        self._kind = kind                          # "collection", "database" or "cluster"
        self._pipeline = copy.deepcopy(pipeline)
        self._full_document = full_document
        self._full_document_before_change = full_document_before_change
        self._uses_start_after = start_after is not None
        self._uses_resume_after = resume_after is not None
        self._resume_token = copy.deepcopy(start_after or resume_after)
        self._max_await_time_ms = max_await_time_ms
        self._batch_size = batch_size
        self._collation = collation
        self._start_at_operation_time = start_at_operation_time
        self._session = session
        self._comment = comment
        self._show_expanded_events = show_expanded_events
        self._closed = False
        self._cursor = self._create_cursor()

    # ------------------------------------------------------------------ the aggregate command
    def _change_stream_options(self) -> dict:
        options: dict = {}
        if self._full_document is not None:
            options["fullDocument"] = self._full_document
        if self._full_document_before_change is not None:
            options["fullDocumentBeforeChange"] = self._full_document_before_change
        token = self.resume_token
        if token is not None:
            options["startAfter" if self._uses_start_after else "resumeAfter"] = token
        elif self._start_at_operation_time is not None:
            options["startAtOperationTime"] = self._start_at_operation_time
        if self._show_expanded_events:
            options["showExpandedEvents"] = self._show_expanded_events
        if self._kind == "cluster":
            options["allChangesForCluster"] = True
        return options

    def _create_cursor(self) -> CommandCursor:
        options: dict = {}
        if self._max_await_time_ms is not None:
            options["maxAwaitTimeMS"] = self._max_await_time_ms
        if self._batch_size is not None:
            options["batchSize"] = self._batch_size
        if self._collation is not None:
            options["collation"] = self._collation
        pipeline = [{"$changeStream": self._change_stream_options()}, *self._pipeline]
        cursor = aggregate(self._target, self._kind == "collection", pipeline, self._session, options,
                           None, self._comment)
        if not cursor._data and cursor._post_batch_resume_token is not None:
            self._resume_token = cursor._post_batch_resume_token
        return cursor

    def _resume(self) -> None:
        try:
            self._cursor.close()
        except PyMongoError:
            pass
        self._cursor = self._create_cursor()

    # ------------------------------------------------------------------ iteration
    @property
    def resume_token(self) -> Optional[Mapping[str, Any]]:
        """The cached token to resume after the most recent change."""
        return copy.deepcopy(self._resume_token)

    @property
    def alive(self) -> bool:
        """Whether the stream may return more changes (False once closed or invalidated)."""
        return not self._closed

    def close(self) -> None:
        self._closed = True
        self._cursor.close()

    def __iter__(self) -> ChangeStream:
        return self

    def next(self) -> Any:
        """The next change, waiting as long as it takes; StopIteration once the stream is closed."""
        while self.alive:
            doc = self.try_next()
            if doc is not None:
                return doc
        raise StopIteration

    __next__ = next

    def try_next(self) -> Any:
        """The next change, or None after one getMore (waiting up to max_await_time_ms) brought
        nothing."""
        if not self._closed and not self._cursor.alive:
            self._resume()
        try:
            try:
                change = self._cursor._try_next(True)
            except PyMongoError as exc:
                if not _resumable(exc):
                    raise
                self._resume()
                change = self._cursor._try_next(False)
        except PyMongoError as exc:
            if not _resumable(exc):
                self.close()
            raise
        except BaseException:
            self.close()
            raise
        if not self._cursor.alive:
            self._closed = True
        if change is None:
            if self._cursor._post_batch_resume_token is not None:
                self._resume_token = self._cursor._post_batch_resume_token
                self._start_at_operation_time = None
            return None
        try:
            token = change["_id"]
        except KeyError:
            self.close()
            raise InvalidOperation("Cannot provide resume functionality when the resume token is missing.") \
                from None
        if not len(self._cursor._data) and self._cursor._post_batch_resume_token:
            token = self._cursor._post_batch_resume_token
        self._uses_start_after = False
        self._uses_resume_after = True
        self._resume_token = token
        self._start_at_operation_time = None
        return change

    def __enter__(self) -> ChangeStream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


WATCH_DOC = """Watch changes (pymongo's `watch()`): a ChangeStream over `aggregate` with `$changeStream`."""


def watch(target: Any, kind: str, pipeline: Any = None, full_document: Optional[str] = None,
          resume_after: Optional[Mapping] = None, max_await_time_ms: Optional[int] = None,
          batch_size: Optional[int] = None, collation: Any = None, start_at_operation_time: Any = None,
          session: Any = None, start_after: Optional[Mapping] = None, comment: Any = None,
          full_document_before_change: Optional[str] = None,
          show_expanded_events: Optional[bool] = None) -> ChangeStream:
    return ChangeStream(target, kind, pipeline, full_document, resume_after, max_await_time_ms, batch_size,
                        collation, start_at_operation_time, session, start_after, comment,
                        full_document_before_change, show_expanded_events)
