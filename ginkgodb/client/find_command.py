"""The `find`, `getMore` and `explain` command documents a Cursor sends, field for field as
pymongo builds them (including its quirks: a falsy comment is not sent; batchSize equal to the
limit is sent as limit + 1; a negative limit means a single batch; a legacy `$query` filter has
its modifiers mapped to find fields).
"""
from __future__ import annotations

from typing import Any, Optional

from bson.int64 import Int64

# Cursor type / query flag bits (pymongo.cursor.CursorType and the wire protocol's flags)
TAILABLE = 2
OPLOG_REPLAY = 8
NO_TIMEOUT = 16
AWAIT_DATA = 32
EXHAUST = 64
PARTIAL = 128
_FLAG_FIELDS = (("tailable", TAILABLE), ("oplogReplay", OPLOG_REPLAY),
                ("noCursorTimeout", NO_TIMEOUT), ("awaitData", AWAIT_DATA),
                ("allowPartialResults", PARTIAL))
_MODIFIERS = {"$query": "filter", "$orderby": "sort", "$hint": "hint", "$comment": "comment",
              "$maxScan": "maxScan", "$maxTimeMS": "maxTimeMS", "$max": "max", "$min": "min",
              "$returnKey": "returnKey", "$showRecordId": "showRecordId",
              "$showDiskLoc": "showRecordId", "$snapshot": "snapshot"}


class FindOptions:
    """Everything a Cursor has been told before it runs (cloned by Cursor.clone).

    The class attributes are the defaults; a Cursor sets on the instance only what it was given
    (cheaper than assigning all of them for every find).
    """

    has_filter: bool = False
    projection: Any = None
    skip: int = 0
    limit: int = 0
    batch_size: int = 0
    ordering: Optional[dict] = None
    explain: bool = False
    hint: Any = None
    let: Any = None
    comment: Any = None
    max_scan: Any = None
    max_time_ms: Optional[int] = None
    max_await_time_ms: Optional[int] = None
    max: Any = None
    min: Any = None
    return_key: Optional[bool] = None
    show_record_id: Optional[bool] = None
    snapshot: Optional[bool] = None
    collation: Any = None
    allow_disk_use: Optional[bool] = None
    query_flags: int = 0
    cursor_type: int = 0
    exhaust: bool = False
    empty: bool = False

    def __init__(self, spec: Any) -> None:
        self.spec = spec

    def __repr__(self) -> str:
        return f"FindOptions({vars(self)!r})"


def _modifiers(opts: FindOptions) -> dict:
    """The legacy query modifiers pymongo derives from the cursor's options, in its order."""
    ops: dict = {}
    if opts.ordering:
        ops["$orderby"] = opts.ordering
    if opts.explain:
        ops["$explain"] = True
    if opts.hint:
        ops["$hint"] = opts.hint
    if opts.let:
        ops["let"] = opts.let
    if opts.comment:
        ops["$comment"] = opts.comment
    if opts.max_scan:
        ops["$maxScan"] = opts.max_scan
    if opts.max_time_ms is not None:
        ops["$maxTimeMS"] = opts.max_time_ms
    if opts.max:
        ops["$max"] = opts.max
    if opts.min:
        ops["$min"] = opts.min
    if opts.return_key is not None:
        ops["$returnKey"] = opts.return_key
    if opts.show_record_id is not None:
        ops["$showDiskLoc"] = opts.show_record_id
    if opts.snapshot is not None:
        ops["$snapshot"] = opts.snapshot
    return ops


def _query_spec(opts: FindOptions) -> Any:
    spec = opts.spec
    ops = _modifiers(opts)
    if ops:
        spec = dict(spec)
        if "$query" not in spec:
            spec = {"$query": spec}
        spec.update(ops)
        return spec
    if "query" in spec and (len(spec) == 1 or next(iter(spec)) == "query"):
        return {"$query": spec}
    return spec


def find_command(collname: str, opts: FindOptions, read_concern: Optional[dict] = None) -> dict:
    """The find command (wrapped as {explain: find} when the cursor explains)."""
    spec = _query_spec(opts)
    cmd: dict = {"find": collname}
    if "$query" in spec:
        cmd.update((_MODIFIERS.get(key, key), value) for key, value in spec.items())
        cmd.pop("$explain", None)
        cmd.pop("$readPreference", None)
    else:
        cmd["filter"] = spec
    if opts.projection:
        cmd["projection"] = opts.projection
    if opts.skip:
        cmd["skip"] = opts.skip
    limit = opts.limit
    if limit:
        cmd["limit"] = abs(limit)
        if limit < 0:
            cmd["singleBatch"] = True
    if opts.batch_size:
        cmd["batchSize"] = opts.batch_size + 1 if limit == opts.batch_size else opts.batch_size
    if read_concern:
        cmd["readConcern"] = read_concern
    if opts.collation:
        cmd["collation"] = opts.collation
    if opts.allow_disk_use is not None:
        cmd["allowDiskUse"] = opts.allow_disk_use
    if opts.query_flags:
        cmd.update((name, True) for name, bit in _FLAG_FIELDS if opts.query_flags & bit)
    if opts.explain:
        return {"explain": cmd}
    return cmd


def get_more_command(cursor_id: int, collname: str, batch_size: Optional[int],
                     max_await_time_ms: Optional[int], comment: Any) -> dict:
    cmd: dict = {"getMore": Int64(cursor_id), "collection": collname}
    if batch_size:
        cmd["batchSize"] = batch_size
    if max_await_time_ms is not None:
        cmd["maxTimeMS"] = max_await_time_ms
    if comment is not None:
        cmd["comment"] = comment
    return cmd
