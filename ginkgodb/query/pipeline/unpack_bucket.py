"""$_internalUnpackBucket: a time-series bucket (docs/design/timeseries.md, format v1) back into
its measurements.

The stage is what a time-series namespace's view pipeline starts with; users may not write it
themselves in mongod either, but the engine puts it there and explain shows it.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Optional

from ginkgodb.errors import CommandError, ErrorCode

from .core import Env, Runtime, StageFn, stage

STAGE = "$_internalUnpackBucket"
_FIELDS = ("timeField", "metaField", "bucketMaxSpanSeconds", "bucketRoundingSeconds", "exclude",
           "include", "assumeNoMixedSchemaData", "eventFilter", "wholeBucketFilter")


def measurement_count(bucket: dict, time_field: str) -> int:
    """How many measurements a bucket holds: the length of its time column (every measurement
    has a time)."""
    return len(bucket.get("data", {}).get(time_field, {}))


def unpack(bucket: dict, time_field: str, meta_field: Optional[str]) -> Iterator[dict]:
    """The measurements of one bucket in insertion order: the time first, then the meta value
    (when the bucket has one), then the other fields in the bucket's column order."""
    data: dict = bucket.get("data", {})
    times = data.get(time_field, {})
    columns = [(name, column) for name, column in data.items() if name != time_field]
    has_meta = meta_field is not None and "meta" in bucket
    meta = bucket.get("meta")
    for key, t in times.items():
        doc: dict[str, Any] = {time_field: t}
        if has_meta:
            doc[meta_field] = meta  # type: ignore[index]
        for name, column in columns:
            if key in column:
                doc[name] = column[key]
        yield doc


@stage(STAGE)
def parse_unpack(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.FailedToParse,
                           "$_internalUnpackBucket specification must be an object, got: "
                           f"{type(spec).__name__}")
    for key in spec:
        if key not in _FIELDS:
            raise CommandError(ErrorCode.FailedToParse,
                               f"unrecognized option to $_internalUnpackBucket: {key}")
    time_field = spec.get("timeField")
    if not isinstance(time_field, str):
        raise CommandError(ErrorCode.FailedToParse,
                           "timeField field must be a single-element field path string")
    meta_field = spec.get("metaField")
    if meta_field is not None and not isinstance(meta_field, str):
        raise CommandError(ErrorCode.FailedToParse,
                           "metaField field must be a single-element field path string")

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        for bucket in docs:
            yield from unpack(bucket, time_field, meta_field)
    return run
