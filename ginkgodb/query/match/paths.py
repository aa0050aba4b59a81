"""Dotted paths over documents, with mongod's implicit array traversal.

`walk(doc, parts, keep_leaf_array)` yields every value a path reaches, as mongod's
BSONElementIterator does:

* documents are descended field by field; a scalar or a missing field on the way yields MISSING;
* an array met before the last component is traversed: each element that is a document is
  searched for the rest of the path, and a numeric component (`a.1.b`) also selects the element
  at that index (which, if it is itself an array, is traversed for the remainder);
* an array at the end of the path yields its elements and then the array itself, unless
  `keep_leaf_array` (used by $size and $elemMatch, which look at whole arrays).

Each value comes with the array offset the positional `$` operator reports (the outermost array
traversed implicitly), or None. `path_predicate` builds the hot `doc -> bool` closure.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ginkgodb.bsonutil.paths import split_path

from .values import MISSING, get_field, is_all_digits, is_object

ElemPredicate = Callable[[Any], bool]
DocPredicate = Callable[[Mapping], bool]


def walk(container: Any, parts: tuple[str, ...], keep_leaf_array: bool,
         start: int = 0) -> Iterator[tuple[Any, int | None]]:
    """(value, array offset) for every value `parts[start:]` reaches inside `container`."""
    n = len(parts)
    i = start
    v = get_field(container, parts[i])
    while i + 1 < n and is_object(v):
        i += 1
        v = get_field(v, parts[i])
    if type(v) is not list:
        yield (v if i + 1 == n else MISSING), None
        return
    if i + 1 == n:
        if not keep_leaf_array:
            for idx, x in enumerate(v):
                yield x, idx
        yield v, None
        return
    yield from _walk_array(v, parts, i + 1, keep_leaf_array)


def _walk_array(arr: list, parts: tuple[str, ...], j: int,
                keep_leaf_array: bool) -> Iterator[tuple[Any, int | None]]:
    """Values of the non-empty remainder `parts[j:]` below each element of `arr`."""
    part = parts[j]
    numeric = is_all_digits(part)
    last = j + 1 == len(parts)
    for idx, x in enumerate(arr):
        if is_object(x):
            for value, _ in walk(x, parts, keep_leaf_array, j):
                yield value, idx
            if numeric and part == str(idx):
                if last:
                    yield x, None
                else:
                    yield from walk(x, parts, keep_leaf_array, j + 1)
        elif numeric and part == str(idx):
            if last:
                yield x, None
            elif type(x) is list:
                yield from _walk_array(x, parts, j + 1, keep_leaf_array)


def path_predicate(path: str, elem: ElemPredicate, keep_leaf_array: bool = False) -> DocPredicate:
    """`doc -> bool`: does any value reached by `path` satisfy `elem`? Fast for plain dicts."""
    parts = split_path(path)
    if len(parts) == 1:
        return _top_level_predicate(parts[0], elem, keep_leaf_array)
    first, rest = parts[0], parts[1:]
    indexes = tuple(_array_index(p) for p in parts)

    def slow(doc: Mapping) -> bool:
        return _any_value(doc, parts, indexes, 0, elem, keep_leaf_array)

    def match_dotted(doc: Mapping) -> bool:
        v = doc.get(first, MISSING)
        i = 1
        for p in rest:
            t = type(v)
            if t is dict:
                v = v.get(p, MISSING)
                i += 1
            elif t is list:
                return _any_in_array(v, parts, indexes, i, elem, keep_leaf_array)
            elif v is MISSING or not is_object(v):
                return elem(MISSING)  # a scalar on the way: the path reaches nothing
            else:
                return slow(doc)
        if type(v) is list and not keep_leaf_array:
            for x in v:
                if elem(x):
                    return True
        return elem(v)

    return match_dotted


def _array_index(part: str) -> int:
    """The array index a path component selects, or -1 ("01" and "x" select none)."""
    return int(part) if is_all_digits(part) and str(int(part)) == part else -1


def _any_value(container: Any, parts: tuple[str, ...], indexes: tuple[int, ...], i: int,
               elem: ElemPredicate, keep_leaf_array: bool) -> bool:
    """`walk` specialised to "does any value satisfy elem", without generators or offsets."""
    n = len(parts)
    v = get_field(container, parts[i])
    while i + 1 < n and (type(v) is dict or is_object(v)):
        i += 1
        v = get_field(v, parts[i])
    if type(v) is not list:
        return elem(v if i + 1 == n else MISSING)
    if i + 1 == n:
        if not keep_leaf_array:
            for x in v:
                if elem(x):
                    return True
        return elem(v)
    return _any_in_array(v, parts, indexes, i + 1, elem, keep_leaf_array)


def _any_in_array(arr: list, parts: tuple[str, ...], indexes: tuple[int, ...], j: int,
                  elem: ElemPredicate, keep_leaf_array: bool) -> bool:
    index = indexes[j]
    last = j + 1 == len(parts)
    if last and index < 0:
        return _any_leaf_in_documents(arr, parts[j], elem, keep_leaf_array)
    for idx, x in enumerate(arr):
        if type(x) is dict or is_object(x):
            if _any_value(x, parts, indexes, j, elem, keep_leaf_array):
                return True
            if idx == index:
                if last:
                    if elem(x):
                        return True
                elif _any_value(x, parts, indexes, j + 1, elem, keep_leaf_array):
                    return True
        elif idx == index:
            if last:
                if elem(x):
                    return True
            elif type(x) is list and _any_in_array(x, parts, indexes, j + 1, elem,
                                                   keep_leaf_array):
                return True
    return False


def _any_leaf_in_documents(arr: list, key: str, elem: ElemPredicate,
                           keep_leaf_array: bool) -> bool:
    """The common `items.sku` case: a plain field of each document element."""
    for x in arr:
        if type(x) is dict:
            y = x.get(key, MISSING)
        elif is_object(x):
            y = get_field(x, key)
        else:
            continue
        if type(y) is list and not keep_leaf_array:
            for z in y:
                if elem(z):
                    return True
        if elem(y):
            return True
    return False


def _top_level_predicate(key: str, elem: ElemPredicate, keep_leaf_array: bool) -> DocPredicate:
    if keep_leaf_array:
        def match_whole(doc: Mapping) -> bool:
            return elem(doc.get(key, MISSING))
        return match_whole

    def match_field(doc: Mapping) -> bool:
        v = doc.get(key, MISSING)
        if type(v) is list:
            for x in v:
                if elem(x):
                    return True
        return elem(v)

    return match_field
