"""Values as the matcher sees them: the MISSING marker, document-like shapes, operand cleanup.

Documents arrive as `bson.decode` builds them; query operands may also be Python types pymongo
accepts (tuples, UUIDs, compiled patterns, SON, RawBSONDocument). `normalize` turns operands
into the decoded shapes once, at compile time, so matching never has to care.
"""
from __future__ import annotations

import datetime
import re
import uuid
from collections.abc import Mapping
from typing import Any

from bson.binary import Binary
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.regex import Regex

from ginkgodb.bsonutil import types as T


class _Missing:
    """A path that leads nowhere. Compares like BSON undefined (mongod's EOO), never stored."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

_UTC = datetime.UTC


def value_bracket(v: Any) -> int:
    """Type bracket of a document value; MISSING shares undefined's bracket as in mongod."""
    if v is MISSING:
        return T.BRACKET_UNDEFINED
    return T.bracket(v)


def is_object(v: Any) -> bool:
    """True for embedded documents (dict, SON, DBRef...), false for arrays and scalars."""
    t = type(v)
    if t is dict:
        return True
    if t is list or t is str:
        return False
    return isinstance(v, (Mapping, DBRef))


def as_document(v: Any) -> Mapping:
    """A document-like value (or an array, seen as {"0": ..., "1": ...}) as a Mapping."""
    if type(v) is dict:
        return v
    if type(v) is list:
        return {str(i): x for i, x in enumerate(v)}
    if isinstance(v, DBRef):
        return v.as_doc()
    return v


def get_field(container: Any, key: str) -> Any:
    """container[key] for documents and arrays (canonical index keys only), else MISSING."""
    t = type(container)
    if t is dict:
        return container.get(key, MISSING)
    if t is list:
        if key.isdigit() and key.isascii() and (key == "0" or key[0] != "0"):
            i = int(key)
            if i < len(container):
                return container[i]
        return MISSING
    if isinstance(container, DBRef):
        return container.as_doc().get(key, MISSING)
    if isinstance(container, Mapping):
        return container.get(key, MISSING)
    return MISSING


def normalize(v: Any) -> Any:
    """A query operand in decoded-BSON shape (dicts, lists, Binary, Regex, naive UTC dates)."""
    t = type(v)
    if t is dict:
        return {k: normalize(x) for k, x in v.items()}
    if t is list or t is tuple:
        return [normalize(x) for x in v]
    if t in _PLAIN:
        return v
    if isinstance(v, DBRef):
        return v
    if isinstance(v, Mapping):
        return {k: normalize(x) for k, x in v.items()}
    if isinstance(v, uuid.UUID):
        return Binary.from_uuid(v)
    if isinstance(v, re.Pattern):
        return Regex.from_native(v)
    if isinstance(v, datetime.datetime):
        return _bson_datetime(v)
    return v


_PLAIN = frozenset({str, int, float, bool, type(None), Decimal128, bytes})


def _bson_datetime(v: datetime.datetime) -> datetime.datetime:
    """What a datetime becomes once stored: naive UTC, millisecond precision."""
    if v.tzinfo is not None:
        v = v.astimezone(_UTC).replace(tzinfo=None)
    return v.replace(microsecond=v.microsecond // 1000 * 1000)


def is_all_digits(s: str) -> bool:
    """mongod's test for a numeric path component: non-empty, ASCII digits only."""
    return s.isdigit() and s.isascii()
