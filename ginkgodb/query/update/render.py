"""Values printed the way mongod's BSONElement::toString prints them inside update errors.

Update messages embed elements (`Cannot create field 'b' in element {a: 1.0}`): doubles keep a
trailing `.0`, objects print as `{ k: v }`, arrays as `[ v ]`, strings in double quotes.
"""
from __future__ import annotations

import datetime
import math
import re
import uuid
from collections.abc import Mapping
from typing import Any

from bson.binary import Binary
from bson.code import Code
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from ginkgodb.bsonutil.compare import date_millis, regex_parts
from ginkgodb.bsonutil.types import Undefined


def render_element(name: str, value: Any) -> str:
    """`name: value`, as mongod prints one element."""
    return f"{name}: {render_value(value)}"


def render_value(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return render_double(v)
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, Mapping):
        return render_document(v)
    if isinstance(v, (list, tuple)):
        return "[ " + ", ".join(render_value(x) for x in v) + " ]" if v else "[]"
    return _render_other(v)


def render_document(d: Mapping) -> str:
    if not d:
        return "{}"
    return "{ " + ", ".join(render_element(k, v) for k, v in d.items()) + " }"


def render_double(v: float) -> str:
    """Up to 16 significant digits; integral values get '.0' so they still look like doubles."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = f"{v:.16g}"
    if "." not in text and "e" not in text and "n" not in text:
        text += ".0"
    return text


def _render_other(v: Any) -> str:
    if isinstance(v, Decimal128):
        return f'NumberDecimal("{v}")'
    if isinstance(v, ObjectId):
        return f"ObjectId('{v}')"
    if isinstance(v, datetime.datetime):
        return f"new Date({date_millis(v)})"
    if isinstance(v, Timestamp):
        return f"Timestamp({v.time}, {v.inc})"
    if isinstance(v, (Regex, re.Pattern)):
        pattern, flags = regex_parts(v)
        return f"/{pattern}/{flags}"
    if isinstance(v, DBRef):
        return render_document(v.as_doc())
    if isinstance(v, Binary):
        return f"BinData({v.subtype}, {bytes(v).hex().upper()})"
    if isinstance(v, bytes):
        return f"BinData(0, {v.hex().upper()})"
    if isinstance(v, uuid.UUID):
        return f"UUID(\"{v}\")"
    if isinstance(v, Code):
        return f"{v}"
    if isinstance(v, MinKey):
        return "MinKey"
    if isinstance(v, MaxKey):
        return "MaxKey"
    if isinstance(v, Undefined):
        return "undefined"
    return repr(v)


def id_element(doc: Mapping) -> str:
    """`_id: <value>` of a document (mongod prints 'no id' when there is none)."""
    if "_id" in doc:
        return render_element("_id", doc["_id"])
    return "no id"


__all__ = ["render_element", "render_value", "render_document", "id_element"]
