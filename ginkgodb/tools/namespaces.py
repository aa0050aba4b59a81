"""Namespace patterns of mongodump/mongorestore: `--nsInclude`, `--nsExclude`, `--nsFrom`/`--nsTo`.

A pattern is a `db.collection` namespace in which `*` matches any run of characters (dots
included) and `\\*`, `\\\\` stand for a literal star and backslash. Renames may name their parts
instead: `--nsFrom 'sales.$coll$' --nsTo 'archive.$coll$'`; with plain stars, the n-th star of
`--nsTo` receives what the n-th star of `--nsFrom` matched. When several renames match, the one
given last wins, as in mongorestore.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from .log import ToolError


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        if c != "\\":
            out.append(c)
        i += 1
    return "".join(out)


def _stars_to_variables(pattern: str) -> str:
    """`a*.b*` -> `a$1$.b$2$` (unescaped stars only), then the escapes resolved."""
    out, count, i = [], 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "*":
            count += 1
            out.append(f"${count}$")
        else:
            out.append(c)
        i += 1
    return _unescape("".join(out))


def _count_stars(pattern: str) -> int:
    return pattern.count("*") - pattern.count("\\*")


def _compile(source: str, target: str) -> tuple[re.Pattern, str]:
    """A regex for `source` and a replacement template for `target` (both in $var$ form)."""
    if "$" not in source:
        source, target = _stars_to_variables(source), _stars_to_variables(target)
    variables: dict[str, int] = {}
    regex, i = [], 0
    while i < len(source):
        if source[i] == "$":
            end = source.find("$", i + 1)
            if end < 0:
                raise ToolError("Extraneous '$'")
            name = source[i + 1:end]
            if name in variables:
                raise ToolError(f"Variable name `{name}` used more than once")
            variables[name] = len(variables) + 1
            regex.append("(.*?)")
            i = end + 1
            continue
        regex.append(re.escape(source[i]))
        i += 1
    template, i = [], 0
    while i < len(target):
        if target[i] == "$":
            end = target.find("$", i + 1)
            if end < 0:
                raise ToolError("Extraneous '$'")
            name = target[i + 1:end]
            if name not in variables:
                raise ToolError(f"Unknown variable `{name}`")
            template.append(f"\\g<{variables[name]}>")
            i = end + 1
            continue
        template.append(target[i].replace("\\", "\\\\"))
        i += 1
    return re.compile("^" + "".join(regex) + "$", re.S), "".join(template)


class Matcher:
    """Whether a namespace matches any of the patterns (an empty list matches nothing)."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self._regexes = []
        for pattern in patterns:
            if "$" in pattern:
                raise ToolError(f"'$' is not allowed in include/exclude patterns: {pattern!r}")
            self._regexes.append(_compile(pattern, pattern)[0])

    def __bool__(self) -> bool:
        return bool(self._regexes)

    def matches(self, namespace: str) -> bool:
        return any(r.match(namespace) for r in self._regexes)


class Renamer:
    """Maps namespaces through --nsFrom/--nsTo pairs; unmatched names stay as they are."""

    def __init__(self, sources: Sequence[str], targets: Sequence[str]) -> None:
        if len(sources) != len(targets):
            raise ToolError("Different number of froms and tos")
        self._rules = []
        for source, target in reversed(list(zip(sources, targets))):
            if "$" in source:
                if source.count("$") % 2:
                    raise ToolError(f"Odd number of dollar signs in from: {source!r}")
                if target.count("$") % 2:
                    raise ToolError(f"Odd number of dollar signs in to: {target!r}")
            elif _count_stars(source) != _count_stars(target):
                raise ToolError(f"Different number of asterisks in from: {source!r} and to: {target!r}")
            try:
                self._rules.append(_compile(source, target))
            except ToolError as exc:
                raise ToolError(f"Invalid replacement from {source!r} to {target!r}: {exc}") from None

    def __bool__(self) -> bool:
        return bool(self._rules)

    def rename(self, namespace: str) -> str:
        for regex, template in self._rules:
            if regex.match(namespace):
                return regex.sub(template, namespace, count=1)
        return namespace


def split_namespace(namespace: str) -> tuple[str, str]:
    db, _, coll = namespace.partition(".")
    return db, coll
