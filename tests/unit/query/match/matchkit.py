"""Helpers for the filter tests: compile-and-match, and the error a bad filter raises."""
import pytest

from ginkgodb.errors import CommandError
from ginkgodb.query.match import compile_filter


def matches(spec, doc):
    return compile_filter(spec)(doc)


def compile_error(spec):
    """(code, errmsg) of the CommandError compiling `spec` raises."""
    with pytest.raises(CommandError) as info:
        compile_filter(spec)
    return info.value.code, info.value.errmsg
