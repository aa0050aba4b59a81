"""Our Database and Collection subclass pymongo's so that `isinstance` checks in code written for
pymongo (its own `gridfs`, ODMs) accept them. pymongo's `__init__` never runs, and no pymongo
method may run on our objects either: `hide_inherited` masks every member pymongo's classes
define that ours do not, so such a name behaves exactly as it did before the subclassing
(`AttributeError`, or our `__getattr__`'s sub-collection).
"""
from __future__ import annotations

from typing import Any

# BaseObject's read preference accessor: it reads only our own `_read_preference` and the
# session's `_txn_read_preference()`; pymongo's own Cursor (gridfs's GridOutCursor) calls it.
KEPT = frozenset({"_read_preference_for"})


class _Hidden:
    """A class attribute that is not there: the lookup falls through to `__getattr__`."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        raise AttributeError(self._name)


def inherited_from_pymongo(cls: type) -> list[str]:
    """The members `cls` would take from pymongo's classes (dunders and KEPT excepted)."""
    found = []
    for name in dir(cls):
        if name.startswith("__") or name in KEPT:
            continue
        owner = next(k for k in cls.__mro__ if name in vars(k))
        if owner.__module__.startswith("pymongo"):
            found.append(name)
    return found


def hide_inherited(cls: type) -> type:
    """Class decorator: mask every member `cls` would otherwise inherit from pymongo."""
    for name in inherited_from_pymongo(cls):
        setattr(cls, name, _Hidden(name))
    return cls
