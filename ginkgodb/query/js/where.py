"""$where: a JavaScript predicate run with `this` and `obj` bound to the document."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bson.code import Code

from ginkgodb.errors import CommandError, ErrorCode

from .convert import dumps_document
from .operation import current
from .sandbox import ScriptError


def where_source(arg: Any) -> str:
    """The code of a $where argument (a string or Code), with mongod's errors."""
    if isinstance(arg, Code):
        if arg.scope is not None:
            raise CommandError(ErrorCode.WhereCodeWScope,
                               "$where no longer supports deprecated BSON type CodeWScope")
        code = str(arg)
    elif type(arg) is str:
        code = arg
    else:
        raise CommandError(ErrorCode.BadValue, "$where got bad type")
    if not code:
        raise CommandError(ErrorCode.BadValue, "code for $where cannot be empty")
    return code


def compile_where(arg: Any) -> Callable[[Mapping], bool]:
    """The predicate of `{$where: arg}`; compiled now (so a syntax error fails the command
    before anything runs) and again in each operation's own sandbox."""
    source = where_source(arg)
    op = current()
    _function_id(op, source)

    def where_matches(doc: Mapping) -> bool:
        op = current()
        box = op.sandbox("where")
        fid = box.compiled(source)
        if fid is None:
            fid = _function_id(op, source)
        try:
            return box.where(fid, dumps_document(doc), op.limit())
        except (TimeoutError, MemoryError, ScriptError) as exc:
            raise op.failure(exc, "where") from None

    return where_matches


def _function_id(op: Any, source: str) -> int:
    fid = op.sandbox("where").function(source, op.limit())
    if fid is None:
        raise CommandError(ErrorCode.WhereCompileError, "$where compile error")
    return fid
