"""BSON values <-> JavaScript values, with mongod's rules, through tagged JSON.

In: doubles and int32 become JS numbers, int64 a NumberLong, Decimal128 a NumberDecimal,
ObjectId an ObjectId, datetime a Date, Binary/bytes a BinData, regexes a RegExp (the flags
JavaScript has), Timestamp, DBRef, MinKey, MaxKey, Code their shell types; null stays null.
Out: every JS number is a double (as mongod writes them) unless it is a NumberInt/NumberLong/
NumberDecimal; Date, RegExp, the shell types and functions (as Code) come back as BSON; undefined
becomes null (pymongo has no undefined). A value JSON cannot hold travels as {"\\u0000": tag, "v": x}.
"""
from __future__ import annotations

import base64
import datetime
import math
import re
from typing import Any

import orjson
from bson.binary import Binary
from bson.code import Code
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from ginkgodb.errors import CommandError, ErrorCode

T = "\u0000"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_JS_REGEX_FLAGS = frozenset("imsu")
_FLAG_LETTERS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"))
_MAX_DEPTH = 150


def _tag(tag: str, v: Any) -> dict:
    return {T: tag, "v": v}


def _millis(d: datetime.datetime) -> int:
    if d.tzinfo is None:
        d = d.replace(tzinfo=datetime.UTC)
    return (d - _EPOCH) // datetime.timedelta(milliseconds=1)


def to_js(v: Any, depth: int = 0) -> Any:
    """A JSON-ready form of a decoded BSON value."""
    t = type(v)
    if t is str or t is bool or v is None:
        return v
    if t is int:
        return v
    if t is float:
        if math.isfinite(v) and not (v == 0.0 and math.copysign(1.0, v) < 0):
            return v
        return _tag("num", "-0" if v == 0.0 else str(v).replace("inf", "Infinity").replace("nan", "NaN"))
    if depth > _MAX_DEPTH:
        raise CommandError(ErrorCode.Overflow, "BSON nesting too deep")
    if isinstance(v, dict):
        if t is DBRef:
            return _dbref(v, depth)
        return {k: to_js(x, depth + 1) for k, x in v.items()}
    if t is list or t is tuple:
        return [to_js(x, depth + 1) for x in v]
    if t is ObjectId:
        return _tag("oid", str(v))
    if t is datetime.datetime:
        return _tag("date", _millis(v))
    if t is Int64:
        return _tag("long", str(int(v)))
    if t is Decimal128:
        return _tag("dec", str(v))
    if t is bytes or t is Binary:
        subtype = v.subtype if t is Binary else 0
        return _tag("bin", [subtype, base64.b64encode(bytes(v)).decode()])
    if t is Regex or isinstance(v, re.Pattern):
        flags = v.flags
        if not isinstance(flags, str):
            flags = "".join(letter for bit, letter in _FLAG_LETTERS if flags & bit)
        return _tag("re", [v.pattern, "".join(f for f in flags if f in _JS_REGEX_FLAGS)])
    if t is Timestamp:
        return _tag("ts", [v.time, v.inc])
    if t is DBRef:
        return _dbref(v, depth)
    if t is MinKey:
        return _tag("min", 1)
    if t is MaxKey:
        return _tag("max", 1)
    if t is Code:
        return _tag("code", str(v))
    if t is datetime.date:
        return _tag("date", _millis(datetime.datetime(v.year, v.month, v.day)))
    if isinstance(v, int):
        return int(v)
    return str(v)


def _dbref(v: DBRef, depth: int) -> dict:
    parts = [v.collection, to_js(v.id, depth + 1)]
    if v.database is not None:
        parts.append(v.database)
    return _tag("ref", parts)


def dumps(v: Any) -> str:
    """JSON text of a decoded BSON value for the sandbox."""
    return orjson.dumps(to_js(v)).decode()


_PLAIN = (str, bool, int, float, type(None))


def dumps_document(doc: Any) -> tuple[str, str]:
    """(JSON text, the top-level fields holding tagged values joined by NUL): the sandbox parses
    the text without a reviver and revives only those fields, much faster for big documents."""
    out, tagged = {}, []
    for k, v in doc.items():
        if type(v) in _PLAIN and not (type(v) is float and not math.isfinite(v)):
            out[k] = v
            continue
        j = to_js(v)
        out[k] = j
        if j is not v:
            tagged.append(k)
    return orjson.dumps(out).decode(), T.join(tagged)


# ---- out ------------------------------------------------------------------------------------

def _from_tag(tag: str, v: Any) -> Any:
    if tag == "num":
        return float(v.replace("Infinity", "inf")) if isinstance(v, str) else float(v)
    if tag == "undef":
        return None
    if tag == "date":
        return _EPOCH.replace(tzinfo=None) + datetime.timedelta(milliseconds=v)
    if tag == "oid":
        return ObjectId(v)
    if tag == "long":
        return Int64(int(v))
    if tag == "int":
        return int(v)
    if tag == "dec":
        return Decimal128(v)
    if tag == "bin":
        data = base64.b64decode(v[1])
        return data if v[0] == 0 else Binary(data, v[0])
    if tag == "re":
        return Regex(v[0], v[1].replace("u", "").replace("g", "").replace("y", "").replace("d", ""))
    if tag == "ts":
        return Timestamp(int(v[0]), int(v[1]))
    if tag == "ref":
        return DBRef(v[0], from_js(v[1]), v[2] if len(v) > 2 else None)
    if tag == "min":
        return MinKey()
    if tag == "max":
        return MaxKey()
    if tag == "code":
        return Code(v)
    raise ValueError(tag)


def from_js(v: Any) -> Any:
    """A BSON-ready value from the sandbox's JSON form (numbers as doubles)."""
    t = type(v)
    if t is int:
        return float(v)
    if t is dict:
        if T in v:
            return _from_tag(v[T], v["v"])
        return {k: from_js(x) for k, x in v.items()}
    if t is list:
        return [from_js(x) for x in v]
    return v


def loads(text: str) -> Any:
    return from_js(orjson.loads(text))
