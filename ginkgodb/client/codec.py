"""BSON in both directions: what the engine is given and what the caller gets back.

Going in, values are normalised exactly as pymongo's encoder would put them on the wire (UUIDs
per uuidRepresentation, tuples as arrays, SON as documents, compiled regexes, custom types from
the type registry), so the engine sees the same values a server would. Inserted documents are
encoded once to BSON and handed over as RawBSONDocument. Coming out, documents (raw BSON from
the engine) are decoded with the caller's codec options, as pymongo decodes replies.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, Optional

import bson
from bson import _dict_to_bson  # type: ignore[attr-defined]
from bson.codec_options import DEFAULT_CODEC_OPTIONS, CodecOptions
from bson.raw_bson import RawBSONDocument

from ..bsonutil.checked import vouch_encoded
from .plain import NotPlain, copy_command, plain_codec, wire_plain

# A reply whose values are all of these needs no decoding.
_SCALARS = (int, float, str, bool, type(None))


def is_raw_class(codec_options: CodecOptions) -> bool:
    """True when the caller asked for RawBSONDocument results."""
    cls = codec_options.document_class
    return isinstance(cls, type) and issubclass(cls, RawBSONDocument)


def encode_document(doc: Mapping[str, Any], codec_options: CodecOptions) -> RawBSONDocument:
    """One document to BSON with the caller's options (a RawBSONDocument passes as is)."""
    if type(doc) is not dict and isinstance(doc, RawBSONDocument):
        return doc
    return RawBSONDocument(bson.encode(doc, False, codec_options))


def encode_insert(doc: Any, codec_options: CodecOptions, plain: Optional[bool] = None) -> RawBSONDocument:
    """A document to insert, to BSON with the caller's options: vouched for when the client's
    own encoding guarantees what the engine would decode it to check (bsonutil.checked).
    `plain`: `plain_codec(codec_options)`, when the caller worked it out once for many."""
    if type(doc) is not dict:
        return encode_document(doc, codec_options)
    raw = _dict_to_bson(doc, False, codec_options)   # bson.encode's own call, without its checks
    if plain is None:
        plain = plain_codec(codec_options)
    return vouch_encoded(raw, doc) if plain else RawBSONDocument(raw)


def to_wire(doc: Mapping[str, Any], codec_options: CodecOptions) -> dict:
    """`doc` as the engine would receive it from a server connection (plain decoded BSON).

    Plain JSON-like commands are copied in Python (plain.py); the rest take the BSON round trip.
    """
    if type(doc) is dict and plain_codec(codec_options):
        try:
            return copy_command(doc)
        except NotPlain:
            pass
    return bson.decode(bson.encode(doc, False, codec_options))


def wire_value(value: Any, codec_options: CodecOptions) -> Any:
    """A single value (a filter, a comment, a `let` document) as the engine would receive it."""
    if plain_codec(codec_options):
        return wire_plain(value, codec_options)
    return bson.decode(bson.encode({"v": value}, False, codec_options))["v"]


def encode_and_size(doc: Mapping[str, Any], codec_options: CodecOptions) -> tuple[dict, int]:
    """A wire-normalised statement and its BSON size (for batch splitting)."""
    data = bson.encode(doc, False, codec_options)
    return bson.decode(data), len(data)


def decode_document(doc: Any, codec_options: CodecOptions) -> Any:
    """One result document, decoded with the caller's codec options."""
    if isinstance(doc, RawBSONDocument):
        if is_raw_class(codec_options):
            return codec_options.document_class(doc.raw, codec_options)
        return bson.decode(doc.raw, codec_options)
    if isinstance(doc, Mapping):
        data = bson.encode(doc)
        if is_raw_class(codec_options):
            return codec_options.document_class(data, codec_options)
        return bson.decode(data, codec_options)
    return doc


def document_decoder(codec_options: CodecOptions) -> Callable[[Any], Any]:
    """decode_document bound to `codec_options`, checking the common case (raw BSON from the
    engine, a decoded document class) first: cursors call it once per document."""
    if is_raw_class(codec_options):
        return lambda doc: decode_document(doc, codec_options)
    decode = bson.decode

    def decoder(doc: Any) -> Any:
        if type(doc) is RawBSONDocument:
            return decode(doc.raw, codec_options)
        return decode_document(doc, codec_options)
    return decoder


def batch_decoder(codec_options: CodecOptions) -> Callable[[list], list]:
    """Decodes a whole batch of result documents: raw BSON from the engine in one
    `bson.decode_all` call over the concatenated bytes (as pymongo decodes a reply), saving the
    per-call cost of decoding document by document; anything else one by one."""
    decoder = document_decoder(codec_options)
    if is_raw_class(codec_options):
        return lambda docs: [decoder(doc) for doc in docs]
    decode_all = bson.decode_all

    def decode_batch(docs: list) -> list:
        try:
            data = b"".join([doc.raw for doc in docs])
        except AttributeError:      # not all raw BSON (an explain reply)
            return [decoder(doc) for doc in docs]
        return decode_all(data, codec_options)
    return decode_batch


class CodecSettings(NamedTuple):
    """What a collection derives from its codec options; computed once per options object,
    since collections are made afresh at every `db.name` access."""

    codec_options: CodecOptions
    decoder: Callable[[Any], Any]     # result documents (document_decoder)
    batch_decoder: Callable[[list], list]
    plain: bool                       # plain values may skip the BSON round trip (plain.py)
    reply_options: CodecOptions       # write replies: dict documents, "replace" decode errors


_SETTINGS: dict[int, CodecSettings] = {}


def codec_settings(codec_options: CodecOptions) -> CodecSettings:
    """The CodecSettings of `codec_options` (cached by identity; the cache keeps it alive)."""
    found = _SETTINGS.get(id(codec_options))
    if found is not None and found.codec_options is codec_options:
        return found
    found = CodecSettings(codec_options, document_decoder(codec_options),
                          batch_decoder(codec_options), plain_codec(codec_options),
                          _plain(codec_options))
    if len(_SETTINGS) >= 64:
        _SETTINGS.clear()
    _SETTINGS[id(codec_options)] = found
    return found


def decode_documents(docs: Iterable[Any], codec_options: CodecOptions) -> list:
    return [decode_document(doc, codec_options) for doc in docs]


def decode_value(value: Any, codec_options: CodecOptions) -> Any:
    """A non-document value from a reply (e.g. a distinct value) as the caller's options see it."""
    if type(value) in _SCALARS:
        return value
    return bson.decode(bson.encode({"v": value}), codec_options)["v"]


def decode_reply(reply: Mapping[str, Any], codec_options: CodecOptions = DEFAULT_CODEC_OPTIONS) -> Any:
    """A whole reply decoded with `codec_options` (what Database.command returns)."""
    data = bson.encode(reply)
    if is_raw_class(codec_options):
        return codec_options.document_class(data, codec_options)
    return bson.decode(data, codec_options)


def plain_reply(reply: Mapping[str, Any], codec_options: CodecOptions = DEFAULT_CODEC_OPTIONS) -> dict:
    """A reply as a dict tree decoded with `codec_options` (document class forced to dict).

    Flat replies (the common {n: 1, ok: 1.0}) are returned as they are: nothing in them depends
    on codec options.
    """
    if type(reply) is dict:
        for value in reply.values():
            if not isinstance(value, _SCALARS):
                break
        else:
            return reply
    return bson.decode(bson.encode(reply), _plain(codec_options))


def _plain(codec_options: CodecOptions) -> CodecOptions:
    if codec_options.document_class is dict and codec_options.unicode_decode_error_handler == "replace":
        return codec_options
    return codec_options.with_options(document_class=dict, unicode_decode_error_handler="replace")
