"""Helpers shared by the expression tests."""
from __future__ import annotations

from typing import Any

import pytest

from ginkgodb.errors import CommandError
from ginkgodb.query.expr import compile_expr


def ev(spec: Any, doc: dict | None = None, variables: dict | None = None) -> Any:
    return compile_expr(spec)(doc if doc is not None else {}, variables)


def code_of(spec: Any, doc: dict | None = None) -> int:
    with pytest.raises(CommandError) as info:
        ev(spec, doc)
    return info.value.code


def message_of(spec: Any, doc: dict | None = None) -> str:
    with pytest.raises(CommandError) as info:
        ev(spec, doc)
    return info.value.errmsg
