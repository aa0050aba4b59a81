"""$regex in filters: the operand's (pattern, options) and the predicate mongod's
RegexMatchExpression applies. Compilation and bounded matching live in `query.pcre`."""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bson.regex import Regex

from ginkgodb.bsonutil.compare import regex_parts

from ..pcre import compile_pcre

__all__ = ["compile_pcre", "regex_operand", "regex_predicate"]


def regex_operand(value: Any) -> tuple[str, str]:
    """(pattern, options) of a Regex / re.Pattern operand, options as the driver sends them."""
    if isinstance(value, re.Pattern):
        value = Regex.from_native(value)
    if isinstance(value.flags, str):
        return value.pattern, value.flags
    return regex_parts(value)


def regex_predicate(pattern: str, options: str) -> Callable[[Any], bool]:
    """RegexMatchExpression: strings that match, and regex values with the same source/options."""
    search = compile_pcre(pattern, options).search
    source = (pattern, options)

    def regex_matches(v: Any) -> bool:
        t = type(v)
        if t is str:
            return search(v) is not None
        if t is Regex:
            return regex_parts(v) == source
        return False

    return regex_matches
