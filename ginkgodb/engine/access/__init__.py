"""Index kinds as access methods: each kind answers how a document is keyed, how its entries
are kept, and (through the planner's side) how a query may scan it (docs/design/seams.md).

`access_method(meta, ns)` builds the one for a catalog entry; `check_kind(key, options)` runs at
createIndexes, so a kind ginkgodb does not serve is refused there (238), never at the next
insert.
"""
from __future__ import annotations

from typing import Any

from ...errors import CommandError, ErrorCode
from ..catalog_entries import IndexMeta
from .btree import BtreeAccess, HashedAccess
from .entries import IndexEntries
from .geo2d import TwoDAccess
from .geo2dsphere import S2Access
from .text import TextAccess
from .unserved import UnservedAccess
from .wildcard import WildcardAccess, check_projection_placement

#: kinds named in a key pattern that ginkgodb does not serve yet
UNSERVED_KINDS = ("2dsphere_bucket", "geoHaystack")
#: the geo kinds (engine/access/geo2dsphere.py, geo2d.py)
GEO_KINDS = ("2d", "2dsphere")


def kind_of(key: dict) -> str:
    """The index kind a key pattern asks for."""
    named = [d for d in key.values() if isinstance(d, str)]
    if "text" in named or "_fts" in key:
        return "text"
    if any(f == "$**" or f.endswith(".$**") for f in key):
        return "wildcard"
    if not named:
        return "btree"
    for kind in UNSERVED_KINDS + GEO_KINDS:
        if kind in named:
            return kind
    return "hashed" if "hashed" in named else named[0]


_KINDS: dict[str, Any] = {"btree": BtreeAccess, "hashed": HashedAccess, "text": TextAccess,
                          "2dsphere": S2Access, "2d": TwoDAccess, "wildcard": WildcardAccess}


def check_kind(key: dict, options: dict) -> None:
    """createIndexes: refuse what no access method serves, then the kind's own rules."""
    kind = kind_of(key)
    check_projection_placement(key, options)
    cls = _KINDS.get(kind)
    if cls is None:
        raise CommandError(ErrorCode.NotImplemented, f"'{kind}' indexes are not supported by ginkgodb yet")
    cls.check_spec(key, options)


def normalize_kind_spec(name: str, key: dict, options: dict) -> tuple[dict, dict]:
    """createIndexes: the (key, options) a kind stores (a text index rewrites both)."""
    normalize = getattr(_KINDS.get(kind_of(key)), "normalize", None)
    return normalize(name, key, options) if normalize is not None else (key, options)


def access_method(meta: IndexMeta, ns: str) -> Any:
    """The access method of a stored index (an unserved kind, from an older data directory,
    refuses writes and serves no query)."""
    cls = _KINDS.get(kind_of(meta.key))
    return cls(meta, ns) if cls is not None else UnservedAccess(meta, ns)


__all__ = ["BtreeAccess", "GEO_KINDS", "HashedAccess", "IndexEntries", "S2Access", "TextAccess", "TwoDAccess",
           "UNSERVED_KINDS", "WildcardAccess", "access_method", "check_kind", "normalize_kind_spec",
           "kind_of"]
