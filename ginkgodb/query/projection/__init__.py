"""Projections for find and $project: `compile_projection(spec).apply(doc, position=None)`.

Inclusion and exclusion (dotted paths reach into arrays of documents), `_id` handling, find's
$slice / $elemMatch / positional `a.$`, and aggregation expressions as computed fields.
"""
from __future__ import annotations

from typing import Any

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query import metadata
from ginkgodb.query.expr import MISSING
from ginkgodb.query.expr.compiler import Scope

from . import apply as A
from .parse import Parser
from .tree import EXCLUDE, INCLUDE, Computed, ElemMatch

__all__ = ["Projection", "compile_projection"]


class Projection:
    """A compiled projection.

    `is_inclusion`: the output holds only the named fields (plus `_id` unless excluded).
    `fields`: the top-level field names the projection reads, or None when it needs the whole
    document (exclusion projections, $$ROOT in expressions); the planner uses it for covering.
    `has_positional`: apply() needs the query's positional match (`position=`).
    """

    __slots__ = ("spec", "root", "is_inclusion", "has_positional", "has_computed", "paths",
                 "fields", "_fast", "_flat", "_positional_parts")

    def __init__(self, spec: dict, parser: Parser) -> None:
        self.spec = spec
        self.root = parser.root
        self.is_inclusion = parser.kind == "inclusion"
        if self.is_inclusion and "_id" not in self.root.entries:
            self.root.entries = {"_id": INCLUDE, **self.root.entries}
        self.has_positional = parser.positional_path is not None
        self._positional_parts = parser.positional_path.split(".") if self.has_positional else None
        self.has_computed = any(isinstance(e, (Computed, ElemMatch)) for _, e in
                                self.root.leaves())
        self.paths = [p for p, e in self.root.leaves() if e is not EXCLUDE]
        self.fields = self._fields()
        self._fast = self._fast_fields()
        self._flat = self._flat_computed()

    def _flat_computed(self) -> tuple[frozenset, list] | None:
        """(kept names, [(name, fn)]) when the projection is top-level inclusions plus
        top-level computed fields: the common $project shape, applied without tree walks."""
        if not self.is_inclusion or self.has_positional or self._fast is not None:
            return None
        keep, computed = set(), []
        for name, entry in self.root.entries.items():
            if entry is INCLUDE:
                keep.add(name)
            elif entry is EXCLUDE:
                continue
            elif type(entry) is Computed:
                computed.append((name, entry.fn))
            else:
                return None
        return frozenset(keep), computed

    def _fields(self) -> list[str] | None:
        if not self.is_inclusion or self.has_computed:
            return None
        return [n for n, e in self.root.entries.items() if e is not EXCLUDE]

    def _fast_fields(self) -> frozenset | None:
        if not self.is_inclusion or self.has_computed or self.has_positional:
            return None
        if any(type(e) is not type(INCLUDE) and e is not EXCLUDE
               for e in self.root.entries.values()):
            return None
        return frozenset(n for n, e in self.root.entries.items() if e is INCLUDE)

    def apply(self, doc: dict, *, position: int | None = None, variables: dict | None = None
              ) -> dict:
        """A new document shaped by the projection. `position` is the array index the query's
        positional `$` matched (Matcher.positional), needed only by `a.$` projections."""
        if self._fast is not None:
            keep = self._fast
            return {k: v for k, v in doc.items() if k in keep}
        if self._flat is not None:
            keep, computed = self._flat
            out = {k: v for k, v in doc.items() if k in keep}
            for name, fn in computed:
                v = fn(doc, variables)
                if v is not MISSING:
                    out[name] = v
            return out
        if not self.is_inclusion:
            out = A.exclude(self.root, doc)
            if self.has_computed:  # $meta fields beside exclusions (or alone)
                A.add_computed(self.root, out, doc, doc, variables)
            return out
        out = A.include(self.root, doc)
        if self.has_computed:
            A.add_computed(self.root, out, doc, doc, variables)
        if self._positional_parts is not None:
            A.apply_positional(out, self._positional_parts, position)
        return out

    __call__ = apply

    def __repr__(self) -> str:
        return f"Projection({self.spec!r})"


def compile_projection(spec: Any, *, for_aggregation: bool = False,
                       known_vars: Any = None, query: Any = None) -> Projection:
    """Parse a projection as find does (or as `$project` does with `for_aggregation`).

    `query` is find's filter: a positional projection (`a.$`) refuses the filter's special
    features ($where, $text, geo-near, $expr, $jsonSchema) as mongod does."""
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.TypeMismatch if not for_aggregation else ErrorCode.ProjectSpecNotObject,
                           "projection must be an object" if not for_aggregation else
                           "$project specification must be an object")
    if for_aggregation and not spec:
        raise CommandError(ErrorCode.ProjectionEmpty,
                           "Invalid $project :: caused by :: projection specification "
                           "must have at least one field")
    key = _plain_key(spec, for_aggregation) if known_vars is None else None
    if key is not None:
        cached = _PLAIN.get(key)
        if cached is not None:
            return cached
        spec = dict(spec)   # the cached projection keeps its own copy of the spec
    scope = Scope(known_vars or (), open_=known_vars is None)
    parser = Parser(find=not for_aggregation, scope=scope, query=query)
    parser.parse(spec)
    if parser.kind == "inclusion":
        for field in metadata.provided():
            parser.root.insert([field], INCLUDE)  # metadata outlives $project
    compiled = Projection(spec, parser)
    if key is not None:
        if len(_PLAIN) >= _PLAIN_SIZE:
            _PLAIN.clear()
        _PLAIN[key] = compiled
    return compiled


# Compiled projections of plain field specs (`{a: 1, "b.c": 0}`), by their fields, values and
# the metadata available: applications repeat their projections, and such a spec compiles to
# the same immutable Projection whatever the query (only a positional `a.$` reads the query).
_PLAIN: dict[tuple, Projection] = {}
_PLAIN_SIZE = 512


def _plain_key(spec: dict, for_aggregation: bool) -> tuple | None:
    """The cache key of a spec of plain names mapped to ints or booleans (the type kept, so 1
    and True stay apart), or None for any other spec (operators, expressions, `$` in a name)."""
    key: list = [for_aggregation, *metadata.provided()]
    for name, value in spec.items():
        kind = type(value)
        if type(name) is not str or "$" in name or (kind is not int and kind is not bool):
            return None
        key += (name, kind, value)
    return tuple(key)

