"""The `aggregate` command for Collection.aggregate (on a collection) and Database.aggregate
(`aggregate: 1`), with pymongo's option handling: batchSize goes into `cursor`, collation and
maxAwaitTimeMS are taken out of the options, a final $out/$merge makes it a write (write concern
attached, no batch size).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from pymongo.collation import validate_collation_or_none
from pymongo.errors import ConfigurationError

from .command_cursor import CommandCursor
from .validation import validate_is_mapping, validate_list, validate_non_negative_int_or_none


def performs_write(pipeline: list) -> bool:
    return bool(pipeline) and ("$out" in pipeline[-1] or "$merge" in pipeline[-1])


def aggregate(target: Any, is_collection: bool, pipeline: Any, session: Any, options: dict,
              let: Optional[Mapping], comment: Any, cursor_class: type = CommandCursor,
              raw_batches: bool = False) -> CommandCursor:
    """Run an aggregation on `target` (a Collection, or a Database when not `is_collection`).

    `raw_batches` asks for an empty first batch, as pymongo's aggregate_raw_batches does.
    """
    if "explain" in options:
        raise ConfigurationError("The explain option is not supported. Use Database.command "
                                 "instead.")
    for name in ("aggregate", "pipeline"):
        if name in options:
            raise ConfigurationError(f"The {name} option cannot be specified as a keyword argument.")
    pipeline = validate_list("pipeline", pipeline)
    writes = performs_write(pipeline)
    validate_is_mapping("options", options)
    if let is not None:
        validate_is_mapping("let", let)
        options["let"] = let
    if comment is not None:
        options["comment"] = comment
    batch_size = validate_non_negative_int_or_none("batchSize", options.pop("batchSize", None))
    options.setdefault("cursor", {})
    if batch_size is not None and not writes:
        options["cursor"]["batchSize"] = batch_size
    if raw_batches and not writes:
        options["cursor"]["batchSize"] = 0
    collation = validate_collation_or_none(options.pop("collation", None))
    max_await_time_ms = options.pop("maxAwaitTimeMS", None)

    database = target.database if is_collection else target
    cmd: dict = {"aggregate": target.name if is_collection else 1, "pipeline": pipeline}
    cmd.update(options)
    read_concern = target.read_concern if "readConcern" not in cmd else None
    write_concern = target._write_concern_for(session) if writes and "writeConcern" not in cmd else None
    reply = database.client._runner.run(
        database.name, cmd, codec_options=target.codec_options, session=session,
        read_concern=read_concern, write_concern=write_concern, collation=collation,
        parse_write_concern_error=True)
    default_ns = target.full_name if is_collection else f"{database.name}.$cmd.aggregate"
    if "cursor" in reply:
        cursor = reply["cursor"]
    else:
        cursor = {"id": 0, "firstBatch": reply.get("result", []), "ns": default_ns}
    if is_collection:
        cursor_collection = target
    else:
        cursor_collection = database[cursor.get("ns", default_ns).split(".", 1)[1]]
    return cursor_class(cursor_collection, cursor, None, batch_size=batch_size or 0,
                         max_await_time_ms=max_await_time_ms, session=session,
                         comment=options.get("comment"))
