"""Values printed the way mongod prints them in messages (`dup key: { _id: 1 }`)."""
from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from typing import Any

from bson.binary import Binary
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from .compare import date_millis


def format_value(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, Int64):
        return str(int(v))
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return format_double(v)
    if isinstance(v, Decimal128):
        return f'NumberDecimal("{v}")'
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, ObjectId):
        return f"ObjectId('{v}')"
    if isinstance(v, datetime.datetime):
        return f"new Date({date_millis(v)})"
    if isinstance(v, DBRef):
        return format_document(v.as_doc())
    if isinstance(v, Mapping):
        return format_document(v)
    if isinstance(v, (list, tuple)):
        return "[ " + ", ".join(format_value(x) for x in v) + " ]" if v else "[]"
    if isinstance(v, (Regex, re.Pattern)):
        flags = v.flags if isinstance(v.flags, str) else ""
        return f"/{v.pattern}/{flags}"
    if isinstance(v, Timestamp):
        return f"Timestamp({v.time}, {v.inc})"
    if isinstance(v, Binary):
        return f"BinData({v.subtype}, {bytes(v).hex().upper()})"
    if isinstance(v, bytes):
        return f"BinData(0, {v.hex().upper()})"
    if isinstance(v, MinKey):
        return "MinKey"
    if isinstance(v, MaxKey):
        return "MaxKey"
    return repr(v)


def format_double(v: float) -> str:
    if math.isnan(v):
        return "nan.0"
    if math.isinf(v):
        return "inf.0" if v > 0 else "-inf.0"
    if v == int(v) and abs(v) < 1e16:
        return str(int(v)) if v or math.copysign(1, v) > 0 else "-0.0"
    return repr(v)


def format_document(d: Mapping) -> str:
    if not d:
        return "{}"
    return "{ " + ", ".join(f"{k}: {format_value(v)}" for k, v in d.items()) + " }"
