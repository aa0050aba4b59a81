"""A filter parsed once per query: each view the planner needs is computed on first use and
shared by IDHACK, the shortcut planner, every index's bounds and partial-index implication."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional, Union

from ..bsonutil import keycodec
from ..bsonutil.sentinels import ABSENT
from .implication import Node, parse_tree
from .plain import plain_value
from .predicates import ParsedFilter, parse_filter


class ParsedQuery:
    __slots__ = ("filter", "_predicates", "_tree", "_id_key", "_branches")

    def __init__(self, filter: Optional[Mapping]) -> None:
        self.filter: Mapping = filter or {}
        self._predicates: Optional[ParsedFilter] = None
        self._tree: Optional[Node] = None
        self._id_key: Any = ABSENT
        self._branches: Optional[list] = None

    @property
    def predicates(self) -> ParsedFilter:
        """Per-path predicate atoms with their $elemMatch scopes (for index bounds)."""
        if self._predicates is None:
            self._predicates = parse_filter(self.filter)
        return self._predicates

    @property
    def implication_tree(self) -> Node:
        """The filter's expression tree, as partial-index implication reasons about it."""
        if self._tree is None:
            self._tree = parse_tree(self.filter)
        return self._tree

    @property
    def id_key(self) -> Optional[bytes]:
        """The encoded `_id` of a `{_id: <plain value>}` filter (IDHACK), else None."""
        if self._id_key is ABSENT:
            self._id_key = id_point_key(self.filter)
        return self._id_key

    @property
    def or_branches(self) -> Optional[list[ParsedQuery]]:
        """The branches of a top-level `$or`, each parsed once (None: no `$or`)."""
        if self._branches is None:
            branches = self.filter.get("$or") if isinstance(self.filter, dict) else None
            if not isinstance(branches, list):
                return None
            self._branches = [ParsedQuery(b) if isinstance(b, dict) else None for b in branches]
        return self._branches


def id_point_key(filt: Any) -> Optional[bytes]:
    """The encoded _id of a `{_id: <plain value>}` filter, else None."""
    if type(filt) is dict and len(filt) == 1 and "_id" in filt:
        value = filt["_id"]
        if plain_value(value):
            return keycodec.encode_value(value)
    return None


def as_query(query: Union[ParsedQuery, Mapping, None]) -> ParsedQuery:
    """A ParsedQuery for a filter document (callers with one already pass it through)."""
    return query if isinstance(query, ParsedQuery) else ParsedQuery(query)
