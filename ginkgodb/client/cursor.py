"""Cursor: the result of Collection.find, with pymongo's chaining API.

Options may be set until the first document is requested; then the `find` command runs and
further batches come from `getMore`. The command fields are built in find_command.py.
"""
from __future__ import annotations

import collections
import copy
from typing import Any, Optional

from bson.code import Code
from pymongo.collation import validate_collation_or_none
from pymongo.cursor import CursorType
from pymongo.errors import InvalidOperation, OperationFailure

from . import keys
from .cursor_base import CURSOR_CLOSED_ERRORS, CursorBase
from .find_command import EXHAUST, TAILABLE, FindOptions, find_command, get_more_command
from .validation import validate_boolean, validate_is_document_type, validate_is_mapping

_CURSOR_TYPES = (CursorType.NON_TAILABLE, CursorType.TAILABLE, CursorType.TAILABLE_AWAIT,
                 CursorType.EXHAUST)


class Cursor(CursorBase):
    """A cursor over the documents a query matches (pymongo.cursor.Cursor's API)."""

    def __init__(self, collection: Any, filter: Optional[Any] = None, projection: Any = None,
                 skip: int = 0, limit: int = 0, no_cursor_timeout: bool = False,
                 cursor_type: int = CursorType.NON_TAILABLE, sort: Any = None,
                 allow_partial_results: bool = False, oplog_replay: bool = False,
                 batch_size: int = 0, collation: Any = None, hint: Any = None,
                 max_scan: Optional[int] = None, max_time_ms: Optional[int] = None,
                 max: Any = None, min: Any = None, return_key: Optional[bool] = None,
                 show_record_id: Optional[bool] = None, snapshot: Optional[bool] = None,
                 comment: Any = None, session: Any = None, allow_disk_use: Optional[bool] = None,
                 let: Any = None) -> None:
        self._id = None
        self._killed = False
        self._init_base(collection, session)
        spec = filter or {}
        validate_is_mapping("filter", spec)
        if not isinstance(skip, int):
            raise TypeError(f"skip must be an instance of int, not {type(skip)}")
        if not isinstance(limit, int):
            raise TypeError(f"limit must be an instance of int, not {type(limit)}")
        _check_bool("no_cursor_timeout", no_cursor_timeout)
        if cursor_type not in _CURSOR_TYPES:
            raise ValueError("not a valid value for cursor_type")
        _check_bool("allow_partial_results", allow_partial_results)
        _check_bool("oplog_replay", oplog_replay)
        _check_batch_size(batch_size)
        if allow_disk_use is not None:
            validate_boolean("allow_disk_use", allow_disk_use)
        opts = self._opts = FindOptions(spec)
        opts.has_filter = filter is not None
        if projection is not None:
            opts.projection = keys.fields_to_dict(projection, "projection")
        if let is not None:
            validate_is_document_type("let", let)
            opts.let = let
        opts.skip, opts.limit, opts.batch_size = skip, limit, batch_size
        _set_given(opts, sort, collation, hint, comment, max_scan, max_time_ms, max, min,
                   return_key, show_record_id, allow_disk_use, snapshot)
        opts.query_flags = cursor_type | (16 if no_cursor_timeout else 0) | (
            128 if allow_partial_results else 0) | (8 if oplog_replay else 0)
        opts.cursor_type = cursor_type
        self._retrieved = 0
        self._dbname = collection._dbname
        self._collname = collection._name
        if cursor_type == CursorType.EXHAUST:
            if limit:
                raise InvalidOperation("Can't use limit and exhaust together.")
            opts.exhaust = True

    # ------------------------------------------------------------------ properties
    @property
    def collection(self) -> Any:
        return self._collection

    @property
    def retrieved(self) -> int:
        """The number of documents retrieved so far."""
        return self._retrieved

    def _namespace(self) -> tuple[str, str]:
        return self._dbname, self._collname

    # ------------------------------------------------------------------ chaining
    def _check_okay_to_chain(self) -> None:
        if self._retrieved or self._id is not None:
            raise InvalidOperation("cannot set options after executing query")

    def limit(self, limit: int) -> Cursor:
        if not isinstance(limit, int):
            raise TypeError(f"limit must be an integer, not {type(limit)}")
        if self._opts.exhaust:
            raise InvalidOperation("Can't use limit and exhaust together.")
        self._check_okay_to_chain()
        self._opts.empty = False
        self._opts.limit = limit
        return self

    def skip(self, skip: int) -> Cursor:
        if not isinstance(skip, int):
            raise TypeError(f"skip must be an integer, not {type(skip)}")
        if skip < 0:
            raise ValueError("skip must be >= 0")
        self._check_okay_to_chain()
        self._opts.skip = skip
        return self

    def batch_size(self, batch_size: int) -> Cursor:
        _check_batch_size(batch_size)
        self._check_okay_to_chain()
        self._opts.batch_size = batch_size
        return self

    def sort(self, key_or_list: Any, direction: Any = None) -> Cursor:
        self._check_okay_to_chain()
        self._opts.ordering = keys.index_document(keys.index_list(key_or_list, direction))
        return self

    def hint(self, index: Any) -> Cursor:
        self._check_okay_to_chain()
        self._opts.hint = keys.hint_document(index)
        return self

    def max_time_ms(self, max_time_ms: Optional[int]) -> Cursor:
        if not isinstance(max_time_ms, int) and max_time_ms is not None:
            raise TypeError(f"max_time_ms must be an integer or None, not {type(max_time_ms)}")
        self._check_okay_to_chain()
        self._opts.max_time_ms = max_time_ms
        return self

    def max_await_time_ms(self, max_await_time_ms: Optional[int]) -> Cursor:
        if not isinstance(max_await_time_ms, int) and max_await_time_ms is not None:
            raise TypeError("max_await_time_ms must be an integer or None, not "
                            f"{type(max_await_time_ms)}")
        self._check_okay_to_chain()
        if self._opts.query_flags & CursorType.TAILABLE_AWAIT:
            self._opts.max_await_time_ms = max_await_time_ms
        return self

    def max_scan(self, max_scan: Optional[int]) -> Cursor:
        self._check_okay_to_chain()
        self._opts.max_scan = max_scan
        return self

    def max(self, spec: Any) -> Cursor:
        if not isinstance(spec, (list, tuple)):
            raise TypeError(f"spec must be an instance of list or tuple, not {type(spec)}")
        self._check_okay_to_chain()
        self._opts.max = dict(spec)
        return self

    def min(self, spec: Any) -> Cursor:
        if not isinstance(spec, (list, tuple)):
            raise TypeError(f"spec must be an instance of list or tuple, not {type(spec)}")
        self._check_okay_to_chain()
        self._opts.min = dict(spec)
        return self

    def comment(self, comment: Any) -> Cursor:
        self._check_okay_to_chain()
        self._opts.comment = comment
        return self

    def collation(self, collation: Any) -> Cursor:
        self._check_okay_to_chain()
        self._opts.collation = validate_collation_or_none(collation)
        return self

    def allow_disk_use(self, allow_disk_use: bool) -> Cursor:
        if not isinstance(allow_disk_use, bool):
            raise TypeError(f"allow_disk_use must be a bool, not {type(allow_disk_use)}")
        self._check_okay_to_chain()
        self._opts.allow_disk_use = allow_disk_use
        return self

    def where(self, code: Any) -> Cursor:
        """Adds a $where clause (JavaScript); the engine decides whether it can run it."""
        self._check_okay_to_chain()
        if not isinstance(code, Code):
            code = Code(code)
        spec = dict(self._opts.spec)
        spec["$where"] = code
        self._opts.spec = spec
        return self

    def add_option(self, mask: int) -> Cursor:
        if not isinstance(mask, int):
            raise TypeError(f"mask must be an int, not {type(mask)}")
        self._check_okay_to_chain()
        if mask & EXHAUST:
            if self._opts.limit:
                raise InvalidOperation("Can't use limit and exhaust together.")
            self._opts.exhaust = True
        self._opts.query_flags |= mask
        return self

    def remove_option(self, mask: int) -> Cursor:
        if not isinstance(mask, int):
            raise TypeError(f"mask must be an int, not {type(mask)}")
        self._check_okay_to_chain()
        if mask & EXHAUST:
            self._opts.exhaust = False
        self._opts.query_flags &= ~mask
        return self

    # ------------------------------------------------------------------ copies
    def clone(self) -> Cursor:
        """A fresh, unevaluated copy of this cursor with the same options."""
        return self._clone(deepcopy=True)

    def _clone(self, deepcopy: bool = True) -> Cursor:
        other = self.__class__(self._collection, session=self._session)
        other._opts = copy.deepcopy(self._opts) if deepcopy else copy.copy(self._opts)
        return other

    def __copy__(self) -> Cursor:
        return self._clone(deepcopy=False)

    def __deepcopy__(self, memo: Any) -> Cursor:
        return self._clone(deepcopy=True)

    def rewind(self) -> Cursor:
        """Rewind this cursor to its unevaluated state (the query runs again)."""
        self.close()
        self._data = collections.deque()
        self._id = None
        self._retrieved = 0
        self._killed = False
        return self

    # ------------------------------------------------------------------ indexing and helpers
    def __getitem__(self, index: Any) -> Any:
        """cursor[n] returns one document; cursor[a:b] applies skip/limit to this cursor."""
        self._check_okay_to_chain()
        self._opts.empty = False
        if isinstance(index, slice):
            return self._apply_slice(index)
        if isinstance(index, int):
            if index < 0:
                raise IndexError("Cursor instances do not support negative indices")
            clone = self.clone()
            clone.skip(index + self._opts.skip)
            clone.limit(-1)
            clone._opts.query_flags &= ~CursorType.TAILABLE_AWAIT
            for doc in clone:
                return doc
            raise IndexError("no such item for Cursor instance")
        raise TypeError(f"index {index!r} cannot be applied to Cursor instances")

    def _apply_slice(self, index: slice) -> Cursor:
        if index.step is not None:
            raise IndexError("Cursor instances do not support slice steps")
        skip = 0
        if index.start is not None:
            if index.start < 0:
                raise IndexError("Cursor instances do not support negative indices")
            skip = index.start
        limit = 0
        if index.stop is not None:
            limit = index.stop - skip
            if limit < 0:
                raise IndexError(f"stop index must be greater than start index for slice {index!r}")
            if limit == 0:
                self._opts.empty = True
        self._opts.skip = skip
        self._opts.limit = limit
        return self

    def explain(self) -> Any:
        """The engine's explain output for this query (the `explain` command around `find`)."""
        clone = self.clone()
        clone._opts.explain = True
        if clone._opts.limit:
            clone._opts.limit = -abs(clone._opts.limit)
        return next(clone)

    def distinct(self, key: str) -> list:
        """Distinct values of `key` among the documents this cursor's filter matches."""
        options: dict = {}
        if self._opts.spec:
            options["query"] = self._opts.spec
        if self._opts.max_time_ms is not None:
            options["maxTimeMS"] = self._opts.max_time_ms
        if self._opts.comment:
            options["comment"] = self._opts.comment
        if self._opts.collation is not None:
            options["collation"] = self._opts.collation
        return self._collection.distinct(key, session=self._session, **options)

    # ------------------------------------------------------------------ iteration
    def __iter__(self) -> Cursor:
        return self

    def next(self) -> Any:
        if self._opts.empty:
            raise StopIteration
        if self._data or self._refresh():
            if self._lazy:
                return self._decode(self._data.popleft())
            return self._data.popleft()
        raise StopIteration

    __next__ = next

    def _next_batch(self, result: list, total: Optional[int] = None) -> bool:
        if self._opts.empty:
            return False
        return super()._next_batch(result, total)

    def _refresh(self) -> int:
        if len(self._data) or self._killed:
            return len(self._data)
        opts = self._opts
        if self._id is None:
            if (opts.min or opts.max) and not opts.hint:
                raise InvalidOperation("Passing a 'hint' is required when using the min/max query"
                                       " option to ensure the query utilizes the correct index")
            read_concern = self._collection.read_concern
            in_txn = self._session is not None and self._session.in_transaction
            level = read_concern.document if read_concern.level and not in_txn else None
            self._send(find_command(self._collname, opts, level), first=True,
                       reads=not opts.explain)
        elif self._id:
            limit = opts.batch_size
            if opts.limit:
                limit = opts.limit - self._retrieved
                if opts.batch_size:
                    limit = min(limit, opts.batch_size)
            self._send(get_more_command(self._id, self._collname, limit,
                                        opts.max_await_time_ms, opts.comment), first=False)
        return len(self._data)

    def _send(self, cmd: dict, first: bool, reads: bool = False) -> None:
        try:
            reply = self._runner().run(self._dbname, cmd, codec_options=self._codec_options,
                                       session=self._session, reads=reads)
        except OperationFailure as exc:
            if exc.code in CURSOR_CLOSED_ERRORS or self._opts.exhaust:
                self._killed = True
            self.close()
            if exc.code in CURSOR_CLOSED_ERRORS and self._opts.query_flags & TAILABLE:
                return
            raise
        except BaseException:
            self.close()
            raise
        self._take_reply(reply, first)

    def _take_reply(self, reply: Any, first: bool) -> None:
        if self._opts.explain:
            self._id = 0
            self._take_batch([reply])                  # decoded like any document
            self._retrieved += 1
        else:
            cursor = reply["cursor"]
            self._id = cursor["id"]
            if first:
                documents = cursor["firstBatch"]
                ns = cursor.get("ns")
                if ns:
                    self._dbname, self._collname = ns.split(".", 1)
            else:
                documents = cursor["nextBatch"]
            self._take_batch(documents)
            self._retrieved += len(documents)
        if self._id == 0:
            self.close()
        if self._opts.limit and self._id and self._opts.limit <= self._retrieved:
            self.close()


def _set_given(opts: FindOptions, sort: Any, collation: Any, hint: Any, comment: Any,
               max_scan: Any, max_time_ms: Any, max: Any, min: Any, return_key: Any,
               show_record_id: Any, allow_disk_use: Any, snapshot: Any) -> None:
    """Options that differ from FindOptions' defaults, checked in pymongo's order."""
    if sort:
        opts.ordering = keys.index_document(sort)
    if collation is not None:
        opts.collation = validate_collation_or_none(collation)
    if hint is not None:
        opts.hint = keys.hint_document(hint)
    for name, value in (("comment", comment), ("max_scan", max_scan),
                        ("max_time_ms", max_time_ms), ("max", max), ("min", min),
                        ("return_key", return_key), ("show_record_id", show_record_id),
                        ("allow_disk_use", allow_disk_use), ("snapshot", snapshot)):
        if value is not None:
            setattr(opts, name, value)


def _check_bool(option: str, value: Any) -> None:
    if value is not True and value is not False:
        validate_boolean(option, value)


def _check_batch_size(batch_size: Any) -> None:
    if type(batch_size) is int and batch_size >= 0:
        return
    if not isinstance(batch_size, int):
        raise TypeError(f"batch_size must be an integer, not {type(batch_size)}")
    if batch_size < 0:
        raise ValueError("batch_size must be >= 0")
