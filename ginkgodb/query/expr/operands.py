"""Operand checks shared by the operator families: null/missing -> null, else a type check
that fails with the operator's own mongod code and message."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ginkgodb.errors import CommandError, ErrorCode

from .compiler import Fn, nary
from .values import nullish, num_kind, type_name


def is_list(v: Any) -> bool:
    return type(v) is list


def is_str(v: Any) -> bool:
    return type(v) is str


def is_doc(v: Any) -> bool:
    return isinstance(v, dict)


def unary(name: str, accepts: Callable[[Any], bool], code: ErrorCode, message: str, *,
          null_to_null: bool = True) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Register `name` as a one-argument operator returning `compute(value)`.

    A value `accepts` rejects fails with `CommandError(code, message + type_name(value))`,
    except null/missing/undefined, which give null when `null_to_null` is set."""
    def register(compute: Callable[[Any], Any]) -> Callable[[Any], Any]:
        @nary(name, 1, 1)
        def build(args: list[Fn]) -> Fn:
            (arg,) = args

            def ev(doc: Any, vars: Any) -> Any:
                v = arg(doc, vars)
                if not accepts(v):
                    if null_to_null and nullish(v):
                        return None
                    raise CommandError(code, message + type_name(v))
                return compute(v)
            return ev
        return compute
    return register


def numeric_unary(name: str, compute: Callable[[Any, int], Any]) -> None:
    """Register `name` as a one-argument numeric operator returning `compute(value, kind)`;
    null/missing give null, any other non-number fails with 28765."""
    @nary(name, 1, 1)
    def build(args: list[Fn]) -> Fn:
        (arg,) = args

        def ev(doc: Any, vars: Any) -> Any:
            v = arg(doc, vars)
            k = num_kind(v)
            if k < 0:
                if nullish(v):
                    return None
                raise CommandError(ErrorCode.NumericUnaryNonNumeric,
                                   f"{name} only supports numeric types, not "
                                   f"{type_name(v)}")
            return compute(v, k)
        return ev


def nullable(v: Any, accepts: Callable[[Any], bool], code: ErrorCode, message: str,
             describe: Callable[[Any], str] = type_name) -> Any:
    """`v`, or None when it is null/missing; a value of another type fails with
    `CommandError(code, message + describe(v))`."""
    if accepts(v):
        return v
    if nullish(v):
        return None
    raise CommandError(code, message + describe(v))


def all_operands(values: Iterable[Any], accepts: Callable[[Any], bool], code: ErrorCode,
                 message: str, describe: Callable[[Any], str] = type_name) -> list | None:
    """The values as a list, or None at the first null/missing one (values after it are not
    drawn, so a generator evaluates lazily); a value of another type fails with
    `CommandError(code, message + describe(value))`."""
    out = []
    for v in values:
        if not accepts(v):
            if nullish(v):
                return None
            raise CommandError(code, message + describe(v))
        out.append(v)
    return out
