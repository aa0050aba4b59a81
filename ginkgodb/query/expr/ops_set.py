"""Set operators over arrays; equality is mongod's value equality (1 == 1.0)."""
from __future__ import annotations

from typing import Any

from ginkgodb.errors import CommandError, ErrorCode

from .compiler import Fn, Scope, fold, is_const, nary, operator, parse_args
from .operands import all_operands, is_list
from .values import hash_key, nullish, type_name


def _unique(values: list) -> list:
    seen: set = set()
    out = []
    for v in values:
        k = hash_key(v)
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out


def _arrays(name: str, code: ErrorCode, values: list) -> list | None:
    """The operands, or None when any is null/missing (checked before any type error)."""
    return all_operands(values, is_list, code,
                        f"All operands of {name} must be arrays. One argument is of type: ")


def _both_arrays(name: str, x: Any, y: Any, first_code: ErrorCode,
                 second_code: ErrorCode) -> None:
    for v, which, code in ((x, "First", first_code), (y, "Second", second_code)):
        if type(v) is not list:
            raise CommandError(code, f"both operands of {name} must be arrays. {which} argument "
                                     f"is of type: {type_name(v)}")


@nary("$setUnion")
def _set_union(args: list[Fn]) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        arrays = _arrays("$setUnion", ErrorCode.SetUnionArgNotArray, [fn(doc, vars) for fn in args])
        if arrays is None:
            return None
        out: list = []
        for v in arrays:
            out.extend(v)
        return _unique(out)
    return ev


@nary("$setIntersection")
def _set_intersection(args: list[Fn]) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        arrays = _arrays("$setIntersection", ErrorCode.SetIntersectionArgNotArray,
                         [fn(doc, vars) for fn in args])
        if arrays is None:
            return None
        result: list | None = None
        for v in arrays:
            if result is None:
                result = _unique(v)
            else:
                keys = {hash_key(x) for x in v}
                result = [x for x in result if hash_key(x) in keys]
        return result if result is not None else []
    return ev


@nary("$setDifference", 2, 2)
def _set_difference(args: list[Fn]) -> Fn:
    a, b = args

    def ev(doc: Any, vars: Any) -> Any:
        x, y = a(doc, vars), b(doc, vars)
        if nullish(x) or nullish(y):
            return None
        _both_arrays("$setDifference", x, y, ErrorCode.SetDifferenceFirstArgNotArray,
                     ErrorCode.SetDifferenceSecondArgNotArray)
        drop = {hash_key(v) for v in y}
        return [v for v in _unique(x) if hash_key(v) not in drop]
    return ev


@operator("$setEquals")
def _set_equals(spec: Any, scope: Scope) -> Fn:
    args = parse_args("$setEquals", spec, scope)
    if len(args) < 2:
        raise CommandError(ErrorCode.SetEqualsTooFewArgs,
                           f"$setEquals needs at least two arguments had: {len(args)}")

    for a in args:
        if is_const(a) and type(a.value) is not list:  # type: ignore[attr-defined]
            raise CommandError(ErrorCode.SetEqualsConstantArgNotArray,
                               "All operands of $setEquals must be arrays. One argument "
                               f"is of type: {type_name(a.value)}")  # type: ignore

    def ev(doc: Any, vars: Any) -> Any:
        first = None
        for fn in args:
            v = fn(doc, vars)
            if type(v) is not list:
                raise CommandError(ErrorCode.SetEqualsArgNotArray,
                                   "All operands of $setEquals must be arrays. One "
                                   f"argument is of type: {type_name(v)}")
            keys = {hash_key(x) for x in v}
            if first is None:
                first = keys
            elif keys != first:
                return False
        return True
    return fold(ev, args)


@nary("$setIsSubset", 2, 2)
def _is_subset(args: list[Fn]) -> Fn:
    a, b = args

    def ev(doc: Any, vars: Any) -> Any:
        x, y = a(doc, vars), b(doc, vars)
        _both_arrays("$setIsSubset", x, y, ErrorCode.SetIsSubsetFirstArgNotArray,
                     ErrorCode.SetIsSubsetSecondArgNotArray)
        keys = {hash_key(v) for v in y}
        return all(hash_key(v) in keys for v in x)
    return ev
