"""MongoDB Extended JSON v2 for the tools, at C speed where the volume is.

- Output (export, metadata.json): documents decoded by pymongo's C codec are serialised by
  orjson; the BSON types JSON lacks are mapped by `bson.json_util`'s own encoders (so the text is
  what `json_util.dumps` gives, compact). Relaxed mode lets orjson write numbers natively; the
  one thing orjson cannot express is a non-finite double (it writes `null`), so any document
  whose text contains `null` is re-checked and written with `{"$numberDouble": "NaN"}` where due.
  Canonical mode wraps every number (`$numberInt`, `$numberLong`, `$numberDouble`): export
  decodes its documents with type decoders (`CANONICAL_CODEC`) that give each number and
  datetime its wrapper as the C decoder builds the document, so orjson writes the result with
  no walk over it in Python (twice as fast as wrapping a decoded document afterwards).
- Input (import): each document goes from JSON text straight to BSON bytes with MongoDB's libbson
  parser (python-bsonjs), which reads canonical, relaxed and legacy (v1) Extended JSON; the
  bytes are inserted as `RawBSONDocument`, never decoded.
- Small values given on the command line (`--query`, `--sort`) and metadata files are parsed by
  `json_util.loads`.
"""
from __future__ import annotations

import datetime as dt
import math
from typing import Any

import bson
import bsonjs
import orjson
from bson import json_util
from bson.codec_options import CodecOptions, DatetimeConversion, TypeDecoder, TypeRegistry
from bson.int64 import Int64
from bson.objectid import ObjectId

from .log import ToolError

RELAXED = json_util.RELAXED_JSON_OPTIONS
CANONICAL = json_util.CANONICAL_JSON_OPTIONS
#: decoding for export: every datetime survives (outside Python's range as DatetimeMS)
EXPORT_CODEC = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)

_EPOCH = dt.datetime(1970, 1, 1)
_I32 = 2 ** 31
_DATETIME = dt.datetime
_encode_default = json_util.default


def _relaxed_default(value: Any) -> Any:
    """orjson's hook for what JSON lacks: ObjectId and datetimes fast, the rest by json_util."""
    kind = type(value)
    if kind is ObjectId:
        return {"$oid": value.binary.hex()}
    if kind is _DATETIME and value.tzinfo is None and value >= _EPOCH:
        text = value.isoformat(timespec="milliseconds")     # json_util's text, no fraction for .000
        return {"$date": (text[:-4] if text.endswith(".000") else text) + "Z"}
    if kind is Int64:
        return int(value)
    if isinstance(value, dict):          # SON and other mappings
        return dict(value)
    return _encode_default(value, RELAXED)


def _relaxed_walk(value: Any) -> Any:
    """A copy in which non-finite doubles (which orjson would write as null) are wrapped."""
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else _encode_default(value, RELAXED)
    if kind is dict:
        return {k: _relaxed_walk(v) for k, v in value.items()}
    if kind is list:
        return [_relaxed_walk(v) for v in value]
    if isinstance(value, dict):
        return {k: _relaxed_walk(v) for k, v in value.items()}
    return value


def _canonical(value: Any) -> Any:
    """`value` with every BSON value in its canonical Extended JSON v2 form."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        return {"$numberInt" if -_I32 <= value < _I32 else "$numberLong": str(value)}
    if kind is float:
        if math.isfinite(value):
            return {"$numberDouble": repr(value)}
        return _encode_default(value, CANONICAL)
    if kind is dict:
        return {k: _canonical(v) for k, v in value.items()}
    if kind is list:
        return [_canonical(v) for v in value]
    if isinstance(value, dict):          # SON from listIndexes
        return {k: _canonical(v) for k, v in value.items()}
    converted = _encode_default(value, CANONICAL)       # final, but for a Code's scope
    if isinstance(converted, dict) and "$scope" in converted:
        converted = dict(converted, **{"$scope": _canonical(converted["$scope"])})
    return converted


# subclasses too: Code is a str and Int64 an int, and each has its own Extended JSON form
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


def dumps_relaxed(doc: Any) -> bytes:
    text = orjson.dumps(doc, default=_relaxed_default, option=_OPTIONS)
    if b"null" in text:       # a real null, or a NaN/Infinity orjson wrote as null
        text = orjson.dumps(_relaxed_walk(doc), default=_relaxed_default, option=_OPTIONS)
    return text


def dumps_canonical(doc: Any) -> bytes:
    return orjson.dumps(_canonical(doc))


# -- canonical output of documents decoded with CANONICAL_CODEC --------------------------------
def _wrapped_double(value: float) -> dict:
    if math.isfinite(value):
        return {"$numberDouble": repr(value)}
    return _encode_default(value, CANONICAL)


def _wrapped_date(value: dt.datetime) -> dict:
    """`{"$date": {"$numberLong": ms}}` (json_util's millisecond count, without its timegm)."""
    delta = value - _EPOCH
    millis = delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000
    return {"$date": {"$numberLong": str(millis)}}


class _Int32(TypeDecoder):
    bson_type = int          # BSON int32 (int64 decodes to Int64)

    def transform_bson(self, value: Any) -> Any:
        return {"$numberInt": str(value)}


class _Int64(TypeDecoder):
    bson_type = Int64

    def transform_bson(self, value: Any) -> Any:
        return {"$numberLong": str(int(value))}


class _Double(TypeDecoder):
    bson_type = float
    transform_bson = staticmethod(_wrapped_double)


class _Date(TypeDecoder):
    bson_type = _DATETIME    # in Python's range; DATETIME_AUTO gives DatetimeMS outside it
    transform_bson = staticmethod(_wrapped_date)


#: decoding for canonical export: numbers and datetimes arrive already wrapped
CANONICAL_CODEC = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO,
                               type_registry=TypeRegistry([_Int32(), _Int64(), _Double(), _Date()]))


def _canonical_default(value: Any) -> Any:
    """orjson's hook for the types left (ObjectId fast, the rest by json_util, which leaves
    the already wrapped numbers of a Code's scope or a DBRef as they are)."""
    if type(value) is ObjectId:
        return {"$oid": value.binary.hex()}
    if isinstance(value, dict):          # SON and other mappings
        return dict(value)
    return _encode_default(value, CANONICAL)


def dumps_decoded_canonical(doc: Any) -> bytes:
    """Canonical Extended JSON of a document decoded with CANONICAL_CODEC."""
    return orjson.dumps(doc, default=_canonical_default, option=_OPTIONS)


def batch_encoder(mode: str) -> tuple[CodecOptions, Any]:
    """(how to decode the documents, document -> bytes) for an output mode."""
    if mode == "relaxed":
        return EXPORT_CODEC, dumps_relaxed
    if mode == "canonical":
        return CANONICAL_CODEC, dumps_decoded_canonical
    raise ToolError(f"invalid JSON format {mode!r}: must be 'relaxed' or 'canonical'")


def dumper(mode: str):
    """The document -> bytes function of an output mode (`relaxed` or `canonical`)."""
    if mode == "relaxed":
        return dumps_relaxed
    if mode == "canonical":
        return dumps_canonical
    raise ToolError(f"invalid JSON format {mode!r}: must be 'relaxed' or 'canonical'")


def canonical_text(doc: Any) -> str:
    """Canonical Extended JSON of a small document (metadata.json), compact as mongodump's."""
    return dumps_canonical(doc).decode()


def json_to_bson(text: bytes) -> bytes:
    """One JSON object (Extended JSON, any mode) as BSON bytes; ValueError says what is wrong."""
    start = text.lstrip()[:1]
    if start != b"{":
        if not start:
            raise ValueError("empty document")
        raise ValueError(f"expected a JSON object, found {start.decode(errors='replace')!r}")
    return bsonjs.loads(text)


def parse_document(text: str, what: str) -> dict:
    """A small Extended JSON document from the command line or a metadata file."""
    try:
        value = json_util.loads(text)
    except (ValueError, TypeError, bson.errors.InvalidBSON) as exc:
        raise ToolError(f"error parsing {what}: {exc}") from None
    if not isinstance(value, dict):
        raise ToolError(f"error parsing {what}: expected a JSON object")
    return value
