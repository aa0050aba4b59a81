"""The parsed shape of a projection: a tree of path components with one action per leaf."""
from __future__ import annotations

from typing import Any

from ginkgodb.errors import CommandError, ErrorCode


class Include:
    __slots__ = ()


class Exclude:
    __slots__ = ()


INCLUDE, EXCLUDE = Include(), Exclude()


class Computed:
    """A field set from an aggregation expression `fn(root, vars)`."""

    __slots__ = ("fn",)

    def __init__(self, fn: Any) -> None:
        self.fn = fn


class Slice:
    """find's {$slice: n} / {$slice: [skip, limit]}."""

    __slots__ = ("skip", "limit")

    def __init__(self, skip: int | None, limit: int) -> None:
        self.skip, self.limit = skip, limit

    def apply(self, v: Any) -> Any:
        if type(v) is not list:
            return v
        if self.skip is None:
            n = self.limit
            return v[n:] if n < 0 else v[:n]
        start = max(0, len(v) + self.skip) if self.skip < 0 else self.skip
        return v[start:start + self.limit]


class ElemMatch:
    """find's {$elemMatch: filter}: the first matching element, as a one-element array."""

    __slots__ = ("matcher",)

    def __init__(self, matcher: Any) -> None:
        self.matcher = matcher

    def first(self, v: Any) -> Any:
        if type(v) is not list:
            return None
        i = self.matcher.positional({"e": v})
        return None if i is None else [v[i]]


class Positional:
    """find's `a.$`: the array element the query's positional match points at."""

    __slots__ = ()


POSITIONAL = Positional()


class Node:
    """One level of the projection: field name -> leaf action or child Node, in spec order."""

    __slots__ = ("entries", "has_computed", "has_positional")

    def __init__(self) -> None:
        self.entries: dict[str, Any] = {}
        self.has_computed = False
        self.has_positional = False

    def insert(self, parts: list[str], leaf: Any) -> None:
        node = self
        chain = [self]
        for i, part in enumerate(parts[:-1]):
            existing = node.entries.get(part)
            if existing is None:
                existing = node.entries[part] = Node()
            elif not isinstance(existing, Node):
                rest = ".".join(parts[i + 1:])
                raise CommandError(ErrorCode.ProjectionPathCollisionPrefix,
                                   f"Path collision at {'.'.join(parts)} remaining portion "
                                   f"{rest}")
            node = existing
            chain.append(node)
        last = parts[-1]
        if last in node.entries:
            raise CommandError(ErrorCode.ProjectionPathCollision,
                               f"Path collision at {'.'.join(parts)}")
        node.entries[last] = leaf
        for n in chain:
            if isinstance(leaf, Computed):
                n.has_computed = True
            if leaf is POSITIONAL:
                n.has_positional = True

    def leaves(self, prefix: str = "") -> list[tuple[str, Any]]:
        out = []
        for name, entry in self.entries.items():
            path = prefix + name
            if isinstance(entry, Node):
                out.extend(entry.leaves(path + "."))
            else:
                out.append((path, entry))
        return out
