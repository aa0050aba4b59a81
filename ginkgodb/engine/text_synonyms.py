"""A text index's synonym source collection (the `synonyms` option, a ginkgodb extension).

`createIndex({title: "text"}, {synonyms: "shop_synonyms"})` names a collection of the same
database holding Atlas Search-shaped mapping documents (query/text/synonyms.py). The collection
is read in the query's own snapshot every time a `$text` plan is built, so a change to it takes
effect for the next query, and a query sees the synonyms of the same point in time as the
documents it reads. Parsing and analysing the mappings is the costly part: the parsed map is
cached, keyed by a digest of the collection's stored records (their keys and bytes), so an
unchanged collection costs one scan of its records and no decoding. A missing collection is
an empty map (the index can be created before its synonyms); a view, or a document that is not
a valid mapping, fails the createIndexes or the query with BadValue.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any, Optional

import bson

from ..errors import CommandError, ErrorCode
from ..query.text import SynonymMap, TextQuery, expand_query
from ..storage.kv import prefix_end
from . import record_format
from .names import check_collection_name

#: the text index option naming the synonym source collection
SYNONYMS_OPTION = "synonyms"
_CACHE_SIZE = 32
_cache: OrderedDict[tuple, SynonymMap] = OrderedDict()
_lock = threading.Lock()
_EMPTY = SynonymMap([])


def check_option(db: str, value: Any) -> str:
    """createIndexes: the option must name a collection (CannotCreateIndex, as the other text
    options' type errors; InvalidNamespace for a name no collection can have)."""
    if not isinstance(value, str):
        raise CommandError(ErrorCode.CannotCreateIndex,
                           "text index option 'synonyms' must be a string naming a collection")
    return check_collection_name(db, value)


def _records(reader: Any, coll: Any):
    prefix = coll.record_prefix
    return reader.scan(prefix, prefix_end(prefix))


def load(reader: Any, catalog: Any, db: str, name: str) -> SynonymMap:
    """The synonym map stored in `db.name` as `reader` sees it (a cached parse when the records
    are unchanged). `catalog` is the catalog of the reader's snapshot."""
    meta = catalog.get(db, name)
    if meta is None:
        return _EMPTY
    if meta.is_view:
        raise CommandError(ErrorCode.BadValue,
                           f"synonym source collection {db}.{name} is a view; it must be a collection")
    coll = catalog.collection(db, name)
    digest = hashlib.blake2b(digest_size=16)
    stored = []
    for key, raw in _records(reader, coll):
        digest.update(len(key).to_bytes(4, "little") + key + len(raw).to_bytes(4, "little"))
        digest.update(raw)
        stored.append(raw)
    cache_key = (meta.uuid, digest.digest())
    with _lock:
        found = _cache.get(cache_key)
        if found is not None:
            _cache.move_to_end(cache_key)
            return found
    try:
        parsed = SynonymMap(bson.decode(record_format.document(raw)) for raw in stored)
    except CommandError as e:
        raise CommandError(ErrorCode.BadValue, f"synonym source collection {db}.{name}: {e.errmsg}") from None
    with _lock:
        _cache[cache_key] = parsed
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return parsed


def source_of(index_meta: Any) -> Optional[str]:
    """The synonym collection a text index names, or None."""
    return index_meta.options.get(SYNONYMS_OPTION)


def expanded(query: TextQuery, index_meta: Any, reader: Any, db: str) -> TextQuery:
    """`query` with the index's synonyms added (unchanged without the option)."""
    name = source_of(index_meta)
    if name is None:
        return query
    catalog = getattr(reader, "catalog", None)
    if catalog is None:
        reader.open()
        catalog = reader.catalog
    return expand_query(query, load(reader, catalog, db, name))
