"""A fast stand-in for the encode/decode round trip on values that come back unchanged.

`codec.to_wire` normalises a command as the wire would (encode with the caller's codec options,
decode with the defaults). For the plain JSON-like values most commands carry, that round trip
is a copy, so it is done here as a copy in Python, cheaper than BSON both ways for the small
documents commands usually hold. Anything whose round trip would change it (tuples, SON, UUIDs,
regex patterns, tz-aware datetimes, str/int/dict subclasses, custom types...) or fail on it
(non-str keys, lone surrogates, ints beyond 64 bits) raises `NotPlain`, and the caller takes the
real round trip, which then does exactly what it always did.

Containers are always copied: the engine may keep what it is given (compiled filters are
cached), so it must never share a dict or list the caller can still change.
"""
from __future__ import annotations

import datetime
from typing import Any

import bson
from bson.codec_options import CodecOptions
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.timestamp import Timestamp

_INT32 = range(-(2 ** 31), 2 ** 31)
_INT64 = range(-(2 ** 63), 2 ** 63)

# Immutable values the round trip gives back equal and of the same type.
_SAME = frozenset({bool, float, type(None), Int64, ObjectId, Decimal128, bytes, Timestamp,
                   MinKey, MaxKey})


class NotPlain(Exception):
    """The value needs the real BSON round trip."""


def plain_codec(codec_options: CodecOptions) -> bool:
    """True when `codec_options` encode plain values as the defaults do (no custom encoders)."""
    registry = codec_options.type_registry
    return (not getattr(registry, "_encoder_map", True)
            and getattr(registry, "_fallback_encoder", True) is None)


def copy_command(cmd: dict) -> dict:
    """A command document as the BSON round trip would give it back, or NotPlain.

    A top-level `_id` is refused: the encoder moves it to the front of the document.
    """
    if "_id" in cmd:
        raise NotPlain
    try:
        return _document(cmd)
    except RecursionError:
        raise NotPlain from None


def copy_value(value: Any) -> Any:
    """One value (nested in a document) as the round trip would give it back, or NotPlain."""
    try:
        return _item(value)
    except RecursionError:
        raise NotPlain from None


def wire_plain(value: Any, codec_options: CodecOptions) -> Any:
    """One value as the engine would receive it, for codec options that pass `plain_codec`:
    copied when plain, else through the real round trip."""
    try:
        return _document(value) if type(value) is dict else _item(value)
    except (NotPlain, RecursionError):
        return bson.decode(bson.encode({"v": value}, False, codec_options))["v"]


def _document(doc: dict) -> dict:
    out = {}
    for key, value in doc.items():
        if type(key) is not str or "\x00" in key or not (key.isascii() or _utf8(key)):
            raise NotPlain
        kind = type(value)
        if kind in _SAME or (kind is str and (value.isascii() or _utf8(value))) or (
                kind is int and value in _INT32):
            out[key] = value
        elif kind is dict:
            out[key] = _document(value)
        else:
            out[key] = _other(value, kind)
    return out


def _item(value: Any) -> Any:
    kind = type(value)
    if kind in _SAME or (kind is str and (value.isascii() or _utf8(value))) or (
            kind is int and value in _INT32):
        return value
    if kind is dict:
        return _document(value)
    return _other(value, kind)


def _other(value: Any, kind: type) -> Any:
    if kind is list:
        return [_item(item) for item in value]
    if kind is int and value in _INT64:
        return Int64(value)         # what an int64 decodes to
    if (kind is datetime.datetime and value.tzinfo is None and not value.microsecond % 1000
            and not value.fold):
        return value                # BSON keeps milliseconds; naive means UTC
    raise NotPlain


def is_utf8(text: str) -> bool:
    """Encodable as UTF-8 (no lone surrogates), as every BSON string must be?"""
    return text.isascii() or _utf8(text)


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
