"""Dotted field paths ("a.b.0") split into their parts, for every layer that walks documents."""
from __future__ import annotations


def split_path(path: str) -> tuple[str, ...]:
    """The parts of a dotted path, unvalidated ("a..b" gives an empty part)."""
    return tuple(path.split("."))
