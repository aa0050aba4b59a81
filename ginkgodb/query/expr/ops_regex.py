"""$regexMatch, $regexFind, $regexFindAll: PCRE patterns (query.pcre), matches bounded in time."""
from __future__ import annotations

import re
from typing import Any

from bson.regex import Regex

from ginkgodb.bsonutil.compare import regex_parts
from ginkgodb.errors import CommandError, ErrorCode

from ..pcre import Pattern, compile_pcre
from .compiler import Fn, Scope, compile_node, operator
from .values import nullish, type_name


def compile_regex(pattern: str, options: str, name: str) -> Pattern:
    """The operator's pattern with PCRE semantics, each match bounded in time (query.pcre)."""
    return compile_pcre(pattern, options, name)


def _parse(name: str, spec: Any, scope: Scope) -> tuple[Fn, Fn, Fn | None]:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.RegexOperatorArgNotObject,
                           f"{name} expects an object of named arguments but found: "
                           f"{type_name(spec)}")
    parts: dict[str, Fn] = {}
    for key, value in spec.items():
        if key not in ("input", "regex", "options"):
            raise CommandError(ErrorCode.RegexUnknownArgument,
                               f"{name} found an unknown argument: {key}")
        parts[key] = compile_node(value, scope)
    if "input" not in parts:
        raise CommandError(ErrorCode.RegexMissingInput, f"{name} requires 'input' parameter")
    if "regex" not in parts:
        raise CommandError(ErrorCode.RegexMissingRegex, f"{name} requires 'regex' parameter")
    return parts["input"], parts["regex"], parts.get("options")


def _prepare(name: str, inp: Fn, rx: Fn, opts: Fn | None, doc: Any, vars: Any
             ) -> tuple[str, Pattern] | None:
    """(input, compiled regex), or None when input or regex is null/missing."""
    s = inp(doc, vars)
    r = rx(doc, vars)
    options = opts(doc, vars) if opts is not None else None
    if not nullish(options) and type(options) is not str:
        raise CommandError(ErrorCode.RegexOptionsNotString,
                           f"{name} needs 'options' to be of type string")
    if isinstance(r, Regex):
        pattern, flags = regex_parts(r)
        if flags and not nullish(options):
            raise CommandError(ErrorCode.RegexOptionsInBothFields,
                               f"{name} found regex option(s) specified in both 'regex' "
                               "and 'option' fields")
        options = flags or options
    elif isinstance(r, re.Pattern):
        pattern, options = r.pattern, options
    elif type(r) is str:
        pattern = r
    elif nullish(r):
        pattern = None
    else:
        raise CommandError(ErrorCode.RegexRegexNotStringOrRegex,
                           f"{name} needs 'regex' to be of type string or regex")
    if not nullish(s) and type(s) is not str:
        raise CommandError(ErrorCode.RegexInputNotString,
                           f"{name} needs 'input' to be of type string")
    if pattern is None or nullish(s):
        return None
    if "\0" in pattern:
        raise CommandError(ErrorCode.RegexPatternContainsNull,
                           f"{name}: regular expression cannot contain an embedded null "
                           "byte")
    if type(options) is str and "\0" in options:
        raise CommandError(ErrorCode.RegexOptionsContainNull,
                           f"{name}: regular expression options cannot contain an "
                           "embedded null byte")
    return s, compile_regex(pattern, options if type(options) is str else "", name)


def _match_doc(m: Any) -> dict:
    return {"match": m.group(0), "idx": m.start(),
            "captures": [g for g in m.groups()]}


#: mongod's BufferMaxSize: what $regexFindAll's results may add up to
_FIND_ALL_MAX_BYTES = 64 * 1024 * 1024


def find_all(rx: Pattern, s: str) -> list[dict]:
    out, pos, size = [], 0, 0
    while pos <= len(s):
        m = rx.search(s, pos)
        if m is None or (m.start() == m.end() == len(s) and s):
            break
        doc = _match_doc(m)
        size += len(doc["match"]) + sum(len(c) for c in doc["captures"] if c is not None) + 32 * (1 + rx.groups)
        if size > _FIND_ALL_MAX_BYTES:
            raise CommandError(ErrorCode.RegexFindAllOutputTooLarge,
                               "$regexFindAll: the size of buffer to store output exceeded the 64MB limit")
        out.append(doc)
        pos = m.end() if m.end() > m.start() else m.end() + 1
    return out


@operator("$regexMatch")
def _regex_match(spec: Any, scope: Scope) -> Fn:
    inp, rx, opts = _parse("$regexMatch", spec, scope)

    def ev(doc: Any, vars: Any) -> Any:
        p = _prepare("$regexMatch", inp, rx, opts, doc, vars)
        return p is not None and p[1].search(p[0]) is not None
    return ev


@operator("$regexFind")
def _regex_find(spec: Any, scope: Scope) -> Fn:
    inp, rx, opts = _parse("$regexFind", spec, scope)

    def ev(doc: Any, vars: Any) -> Any:
        p = _prepare("$regexFind", inp, rx, opts, doc, vars)
        if p is None:
            return None
        m = p[1].search(p[0])
        return _match_doc(m) if m else None
    return ev


@operator("$regexFindAll")
def _regex_find_all(spec: Any, scope: Scope) -> Fn:
    inp, rx, opts = _parse("$regexFindAll", spec, scope)

    def ev(doc: Any, vars: Any) -> Any:
        p = _prepare("$regexFindAll", inp, rx, opts, doc, vars)
        return [] if p is None else find_all(p[1], p[0])
    return ev
