"""Type inspection: $type, $isNumber, $isArray."""
from __future__ import annotations

from ginkgodb.bsonutil.types import is_bson_number

from .compiler import Fn, nary
from .values import type_name


@nary("$type", 1, 1)
def _type(args: list[Fn]) -> Fn:
    (arg,) = args
    return lambda doc, vars: type_name(arg(doc, vars))


@nary("$isNumber", 1, 1)
def _is_number(args: list[Fn]) -> Fn:
    (arg,) = args
    return lambda doc, vars: is_bson_number(arg(doc, vars))


@nary("$isArray", 1, 1)
def _is_array(args: list[Fn]) -> Fn:
    (arg,) = args
    return lambda doc, vars: isinstance(arg(doc, vars), list)
