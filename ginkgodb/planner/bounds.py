"""Index bounds from a filter: per index field, the intervals of keys a matching document has.

This follows mongod's rules:
- Predicates on one field intersect. On a multikey path they intersect only inside one
  `$elemMatch`; otherwise one predicate is kept and the rest are re-checked.
- On a compound index, two fields below a shared array prefix combine their bounds only when
  one `$elemMatch` pins that array element. Otherwise the later field scans everything.
- A top-level `$or` is planned branch by branch by the caller and is ignored here.

`IndexBounds.exact` says whether the scanned ranges alone prove the whole filter, so that no
document needs a re-check.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from . import intervals as I
from .intervals import Interval
from .key_ranges import ByteRange, build_key_ranges
from .predicates import Atom, Scope, parse_filter
from .translate import FieldInfo, Translation, translate

# mongod sorts AND children by match type before assigning them to an index; the first wins.
_RANK = {"$eq": 5, "$lte": 6, "$lt": 7, "$gt": 8, "$gte": 9, "$regex": 10, "$mod": 11,
         "$exists": 12, "$in": 13, "$not": 20, "$ne": 20, "$nin": 20, "$type": 25, "other": 30}
_ELEM_MATCH_RANK = 3


@dataclass
class FieldBounds:
    name: str
    direction: int               # 1 or -1 (hashed fields are ascending)
    intervals: list[Interval]    # ascending by value, disjoint

    def to_explain(self) -> list[str]:
        if self.direction < 0:
            return [iv.to_explain(descending=True) for iv in reversed(self.intervals)]
        return [iv.to_explain() for iv in self.intervals]


class IndexBounds:
    """Bounds of one index scan: per-field intervals, byte ranges, and exactness."""

    def __init__(self, fields: list[FieldBounds], exact: bool) -> None:
        self.fields = fields
        self._ranges, precise = build_key_ranges([(f.intervals, f.direction) for f in fields])
        self.exact = exact and precise

    def key_ranges(self) -> list[ByteRange]:
        """Ascending, non-overlapping [lo, hi) over encoded keys (hi None: unbounded)."""
        return list(self._ranges)

    def to_explain(self) -> dict[str, list[str]]:
        """mongod's explain `indexBounds`."""
        return {f.name: f.to_explain() for f in self.fields}

    def is_point(self, i: int) -> bool:
        return all(iv.is_point() for iv in self.fields[i].intervals)

    def is_single_point(self, i: int) -> bool:
        ivs = self.fields[i].intervals
        return len(ivs) == 1 and ivs[0].is_point()

    def is_full(self, i: int) -> bool:
        return I.is_full(self.fields[i].intervals)

    def admits_null(self, i: int) -> bool:
        """Whether null keys (which missing fields also get) lie inside field i's bounds."""
        return any(I.contains(iv, I.NULL.key) for iv in self.fields[i].intervals)

    def __repr__(self) -> str:
        return f"IndexBounds({self.to_explain()}, exact={self.exact})"


def compute_bounds(key_pattern: list[tuple[str, Any]], query: Any, *,
                   multikey_paths: set[str] | frozenset[str] = frozenset(),
                   sparse: bool = False) -> IndexBounds:
    """Bounds of an index on `key_pattern` for the conjunctive part of a query (a ParsedQuery,
    whose predicates are parsed once for all indexes, or a filter document)."""
    parsed = query.predicates if hasattr(query, "predicates") else parse_filter(query or {})
    names = [name for name, _ in key_pattern]
    exact = parsed.complete and all(a.path in names and a.op != "other" for a in parsed.atoms)
    by_path: dict[str, list[Atom]] = {}
    for atom in parsed.atoms:
        by_path.setdefault(atom.path, []).append(atom)
    fields: list[FieldBounds] = []
    chosen: list[tuple[str, Optional[tuple[Scope, ...]]]] = []  # bounded fields so far
    for name, kind in key_pattern:
        direction = -1 if not isinstance(kind, str) and kind < 0 else 1
        atoms = by_path.get(name)
        if not atoms:
            fields.append(FieldBounds(name, direction, [I.full()]))
            continue
        mk = _multikey_prefixes(name, multikey_paths)
        info = FieldInfo(name, bool(mk), any(p != name for p in mk), kind == "hashed", sparse,
                         len(key_pattern) > 1)
        t, chain, used_all = _combine(atoms, info, mk)
        if not _compoundable(name, chain, chosen, multikey_paths):
            t, used_all = Translation([I.full()], False), False
        exact = exact and t.exact and used_all
        if not I.is_full(t.intervals):
            chosen.append((name, chain))
        fields.append(FieldBounds(name, direction, t.intervals))
    return IndexBounds(fields, exact)


def _multikey_prefixes(path: str, multikey_paths: Any) -> set[str]:
    return {p for p in multikey_paths if _covers(p, path)}


def _covers(prefix: str, path: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")


def _pins(chain: tuple[Scope, ...], prefix: str) -> bool:
    """Whether an $elemMatch in `chain` fixes one element of the array at `prefix`."""
    return any(_covers(prefix, scope.path) for scope in chain[1:])


def _combine(atoms: list[Atom], info: FieldInfo,
             mk: set[str]) -> tuple[Translation, Optional[tuple[Scope, ...]], bool]:
    """(bounds, scope chain they came from, whether every predicate went into them)."""
    if not mk:
        return _intersect_all(atoms, info), None, True
    groups: dict[int, list[Atom]] = {}
    for atom in atoms:
        groups.setdefault(atom.scopes[-1].id, []).append(atom)
    candidates = []
    for group in groups.values():
        chain = group[0].scopes
        if all(_pins(chain, p) for p in mk):
            rank = _ELEM_MATCH_RANK if len(chain) > 1 else min(_RANK[a.op] for a in group)
            candidates.append((rank, _intersect_all(group, info), chain))
        else:
            candidates.extend((_RANK[a.op], translate(a, info), chain) for a in group)
    rank, best, chain = min(candidates, key=lambda c: c[0])
    return best, chain, len(candidates) == 1


def _intersect_all(atoms: list[Atom], info: FieldInfo) -> Translation:
    result: Optional[Translation] = None
    for atom in atoms:
        t = translate(atom, info)
        if result is None:
            result = t
        else:
            result = Translation(I.intersect(result.intervals, t.intervals), result.exact and t.exact)
    assert result is not None
    return result


def _compoundable(name: str, chain: Optional[tuple[Scope, ...]],
                  chosen: list[tuple[str, Optional[tuple[Scope, ...]]]], multikey_paths: Any) -> bool:
    """Bounds on `name` may combine with earlier bounded fields unless they share an array
    prefix that no common $elemMatch pins (their values may come from different elements)."""
    for other, other_chain in chosen:
        for p in multikey_paths:
            if not (_covers(p, name) and _covers(p, other)):
                continue
            if chain is None or other_chain is None:
                return False
            common = {s.id for s in chain[1:]} & {s.id for s in other_chain[1:]}
            if not any(s.id in common and _covers(p, s.path) for s in chain[1:]):
                return False
    return True
