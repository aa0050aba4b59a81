"""Compiled filter nodes: each holds ready-made closures, built once per query.

* `match(doc)`: does the node match a whole document (paths traversed as mongod does)?
* `elem(value)`: mongod's matchesSingleElement: the node applied to one value without any path
  traversal; used under `$elemMatch` (value form) and by parents that test single values.
* `record(doc, box)`: slow twin of `match` that also records, in `box[0]`, the array offset the
  positional `$` operator refers to (mongod's MatchDetails.elemMatchKey).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ginkgodb.bsonutil.paths import split_path

from .paths import ElemPredicate, path_predicate, walk

DocPredicate = Callable[[Mapping], bool]
_T = TypeVar("_T")


class Node:
    __slots__ = ("match", "elem", "paths")

    def __init__(self, match: DocPredicate, elem: ElemPredicate | None,
                 paths: frozenset[str] = frozenset()) -> None:
        self.match = match
        self.elem = elem
        self.paths = paths

    def record(self, doc: Mapping, box: list) -> bool:
        """Like match; nodes that can report a positional offset override this."""
        return self.match(doc)


class PathNode(Node):
    """A leaf predicate on the values a path reaches (any value satisfying `elem` matches).

    `element_index(value)`, when given, names the array element that made `elem` true
    ($elemMatch reports it as the positional offset unless an outer array offset exists).
    """

    __slots__ = ("path", "keep_leaf_array", "element_index")

    def __init__(self, path: str, elem: ElemPredicate, *, keep_leaf_array: bool = False,
                 element_index: Callable[[Any], int | None] | None = None) -> None:
        super().__init__(path_predicate(path, elem, keep_leaf_array), elem, frozenset({path}))
        self.path = path
        self.keep_leaf_array = keep_leaf_array
        self.element_index = element_index

    def record(self, doc: Mapping, box: list) -> bool:
        elem = self.elem
        for value, offset in walk(doc, split_path(self.path), self.keep_leaf_array):
            if elem(value):
                if self.element_index is not None:
                    inner = self.element_index(value)
                    if inner is not None:
                        box[0] = inner
                if offset is not None:
                    box[0] = offset
                return True
        return False


class ValueNode(Node):
    """A predicate parsed for single values only (operators under `$elemMatch`'s value form)."""

    __slots__ = ()

    def __init__(self, elem: ElemPredicate) -> None:
        super().__init__(_no_document_match, elem)


def _no_document_match(doc: Mapping) -> bool:
    raise AssertionError("value-only predicate applied to a document")


class DocumentNode(Node):
    """A predicate over whole documents only ($expr, $jsonSchema): no single-value form."""

    __slots__ = ()

    def __init__(self, match: DocPredicate) -> None:
        super().__init__(match, None)


class AndNode(Node):
    __slots__ = ("children",)

    def __init__(self, children: list[Node]) -> None:
        super().__init__(all_of([c.match for c in children]),
                         _all_elems(children), _union(children))
        self.children = children

    def record(self, doc: Mapping, box: list) -> bool:
        # Every child records; the last one to set an offset wins, as in mongod.
        for child in self.children:
            if not child.record(doc, box):
                return False
        return True


class OrNode(Node):
    """$or: children are evaluated without recording offsets, as mongod does."""

    __slots__ = ()

    def __init__(self, children: list[Node]) -> None:
        super().__init__(any_of([c.match for c in children]), None, _union(children))


class NotNode(Node):
    """Negation of a child ($not, $ne, $nin, $exists: false); never records an offset."""

    __slots__ = ()

    def __init__(self, child: Node) -> None:
        match = child.match
        elem = child.elem
        super().__init__(lambda doc: not match(doc),
                         None if elem is None else (lambda v: not elem(v)), child.paths)


class ConstNode(Node):
    __slots__ = ()

    def __init__(self, result: bool) -> None:
        super().__init__((lambda doc: True) if result else (lambda doc: False),
                         (lambda v: True) if result else (lambda v: False))


def all_of(fns: list[Callable[[_T], Any]]) -> Callable[[_T], Any]:
    """Conjunction with short-circuit, unrolled for the common small sizes (of document
    predicates, and of raw_prefilter's tests on bytes)."""
    if not fns:
        return lambda doc: True
    if len(fns) == 1:
        return fns[0]
    if len(fns) == 2:
        f, g = fns
        return lambda doc: f(doc) and g(doc)
    if len(fns) == 3:
        f, g, h = fns
        return lambda doc: f(doc) and g(doc) and h(doc)
    fs = tuple(fns)

    def match_all(doc: Any) -> bool:
        for f in fs:
            if not f(doc):
                return False
        return True

    return match_all


def any_of(fns: list[Callable[[_T], Any]]) -> Callable[[_T], Any]:
    """Disjunction with short-circuit (of document predicates, and of raw_prefilter's searches
    within one group)."""
    if len(fns) == 1:
        return fns[0]
    if len(fns) == 2:
        f, g = fns
        return lambda doc: f(doc) or g(doc)
    fs = tuple(fns)

    def match_any(doc: Any) -> bool:
        for f in fs:
            if f(doc):
                return True
        return False

    return match_any


def _all_elems(children: list[Node]) -> ElemPredicate | None:
    elems = [c.elem for c in children]
    if any(e is None for e in elems):
        return None
    return all_of(elems)  # the same short-circuit shape works on values


def _union(children: list[Node]) -> frozenset[str]:
    out: frozenset[str] = frozenset()
    for c in children:
        out |= c.paths
    return out


def leaf(path: str | None, elem: ElemPredicate, *, keep_leaf_array: bool = False,
         element_index: Callable[[Any], int | None] | None = None) -> Node:
    """A path predicate, or a value-only predicate when parsed under $elemMatch's value form."""
    if path is None:
        return ValueNode(elem)
    return PathNode(path, elem, keep_leaf_array=keep_leaf_array, element_index=element_index)


def conjunction(children: list[Node]) -> Node:
    """AND of children; a single child stands alone (mongod's optimizer does the same)."""
    return children[0] if len(children) == 1 else AndNode(children)


def disjunction(children: list[Node]) -> Node:
    return children[0] if len(children) == 1 else OrNode(children)
