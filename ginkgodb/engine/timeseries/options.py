"""`create`'s `timeseries` option checked and completed as mongod 7.0 does (granularity or the
custom bucketMaxSpanSeconds = bucketRoundingSeconds pair), and what a namespace's entry says."""
from __future__ import annotations

from typing import Any, Optional

from ...bsonutil.types import type_name
from ...errors import CommandError, ErrorCode

BUCKETS_PREFIX = "system.buckets."
GRANULARITIES = ("seconds", "minutes", "hours")
#: granularity -> (bucketMaxSpanSeconds, bucketRoundingSeconds), mongod's table
SPANS = {"seconds": (3600, 60), "minutes": (86400, 3600), "hours": (2592000, 86400)}
MAX_SPAN_SECONDS = 31536000  # one year: mongod's bound on bucketMaxSpanSeconds
_FIELDS = ("timeField", "metaField", "granularity", "bucketMaxSpanSeconds", "bucketRoundingSeconds")
#: create options that may come with `timeseries` (the rest are refused as mongod refuses them)
ALLOWED_WITH = frozenset({"timeseries", "expireAfterSeconds", "storageEngine", "indexOptionDefaults", "temp"})


def _field(name: str) -> str:
    return f"BSON field 'create.timeseries.{name}'"


def _check_field_name(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"{_field(name)} is the wrong type '{type_name(value)}', expected type 'string'")
    if "." in value:
        raise CommandError(ErrorCode.InvalidOptions,
                           f"The '{name}' option cannot contain embedded fields ('.')")
    if value.startswith("$") or not value:
        raise CommandError(ErrorCode.BadValue, f"The '{name}' option must be a valid field name")
    return value


def _seconds(spec: dict, name: str) -> Optional[int]:
    if name not in spec:
        return None
    value = spec[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"{_field(name)} is the wrong type '{type_name(value)}', expected type 'int'")
    value = int(value)
    if value < 1:
        raise CommandError(ErrorCode.BadValue, f"{_field(name)} value must be >= 1, actual value '{value}'")
    if value > MAX_SPAN_SECONDS:
        raise CommandError(ErrorCode.BadValue,
                           f"{_field(name)} value must be <= {MAX_SPAN_SECONDS}, actual value '{value}'")
    return value


def parse_timeseries(spec: Any) -> dict:
    """The stored `timeseries` option: {timeField, metaField?, granularity?,
    bucketRoundingSeconds, bucketMaxSpanSeconds} in mongod's order."""
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field 'create.timeseries' is the wrong type "
                                                   f"'{type_name(spec)}', expected type 'object'")
    for key in spec:
        if key not in _FIELDS:
            raise CommandError(ErrorCode.IDLUnknownField, f"{_field(key)} is an unknown field.")
    if "timeField" not in spec:
        raise CommandError(ErrorCode.IDLFailedToParse, f"{_field('timeField')} is missing but a required field")
    time_field = _check_field_name(spec["timeField"], "timeField")
    meta_field = _check_field_name(spec["metaField"], "metaField") if "metaField" in spec else None
    if meta_field == time_field:
        raise CommandError(ErrorCode.InvalidOptions,
                           "The 'metaField' option cannot be the same as the 'timeField' option")
    if meta_field == "_id":
        raise CommandError(ErrorCode.InvalidOptions, "The 'metaField' option cannot be '_id'")
    granularity = spec.get("granularity")
    if granularity is not None and granularity not in GRANULARITIES:
        shown = granularity if isinstance(granularity, str) else type_name(granularity)
        raise CommandError(ErrorCode.BadValue, f"Enumeration value '{shown}' for field "
                                               "'create.timeseries.granularity' is not a valid value.")
    span, rounding = _seconds(spec, "bucketMaxSpanSeconds"), _seconds(spec, "bucketRoundingSeconds")
    if granularity is not None:
        default_span, default_rounding = SPANS[granularity]
        if span is not None and span != default_span:
            raise CommandError(ErrorCode.InvalidOptions,
                               "Timeseries 'bucketMaxSpanSeconds' is not configurable to a value other than "
                               f"the default of {default_span} for the provided granularity")
        if rounding is not None and rounding != default_rounding:
            raise CommandError(ErrorCode.InvalidOptions,
                               "Timeseries 'bucketRoundingSeconds' is not configurable to a value other than "
                               f"the default of {default_rounding} for the provided granularity")
        span, rounding = default_span, default_rounding
    else:
        if (span is None) != (rounding is None):
            raise CommandError(ErrorCode.InvalidOptions,
                               "Timeseries 'bucketMaxSpanSeconds' and 'bucketRoundingSeconds' need to be "
                               "set alongside each other")
        if span != rounding:
            raise CommandError(ErrorCode.InvalidOptions,
                               "Timeseries 'bucketRoundingSeconds' needs to be equal to 'bucketMaxSpanSeconds'")
        if span is None:
            granularity = "seconds"
            span, rounding = SPANS["seconds"]
    out: dict = {"timeField": time_field}
    if meta_field is not None:
        out["metaField"] = meta_field
    if granularity is not None:
        out["granularity"] = granularity
    out["bucketRoundingSeconds"] = rounding
    out["bucketMaxSpanSeconds"] = span
    return out


def parse_expire_after(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CommandError(ErrorCode.InvalidOptions, "'expireAfterSeconds' must be a number")
    if value < 0:
        raise CommandError(ErrorCode.InvalidOptions,
                           "TTL index 'expireAfterSeconds' option cannot be less than 0")
    return int(value)


def check_create_options(options: dict) -> dict:
    """The options of a time-series `create` (validated), as the namespace's entry keeps them."""
    for key in options:
        if key not in ALLOWED_WITH:
            if key == "collation":
                raise CommandError(ErrorCode.NotImplemented,
                                   "create with 'timeseries' and 'collation' is not supported by ginkgodb yet")
            raise CommandError(ErrorCode.InvalidOptions,
                               f"option '{key}' is not supported on a time-series collection")
    out: dict = {"timeseries": parse_timeseries(options["timeseries"])}
    if "expireAfterSeconds" in options:
        out["expireAfterSeconds"] = parse_expire_after(options["expireAfterSeconds"])
    return out


def timeseries_options(meta: Any) -> Optional[dict]:
    """The `timeseries` option when `meta` is a time-series namespace's entry (the view-like
    name, not its buckets), else None."""
    if meta is None or "viewOn" not in meta.options:
        return None
    ts = meta.options.get("timeseries")
    return ts if isinstance(ts, dict) else None


def buckets_name(name: str) -> str:
    return BUCKETS_PREFIX + name
