"""Comparison, boolean and conditional operators, plus $literal and $let."""
from __future__ import annotations

from typing import Any

from ginkgodb.bsonutil.compare import compare
from ginkgodb.errors import CommandError, ErrorCode

from .compiler import (
    Fn,
    Scope,
    compile_node,
    const,
    defer_fold_errors,
    fold,
    is_const,
    nary,
    operator,
    parse_args,
    validate_var_write,
)
from .values import MISSING, UNDEFINED, nullish, truthy

# ---- comparison: BSON order across types, missing sorts with undefined below null ----------


def cmp_values(a: Any, b: Any) -> int:
    if a is MISSING:
        a = UNDEFINED
    if b is MISSING:
        b = UNDEFINED
    t = type(a)
    if t is type(b) and (t is int or t is str):
        return (a > b) - (a < b)
    return compare(a, b)


def _comparison(name: str, test: Any) -> None:
    @nary(name, 2, 2)
    def build(args: list[Fn]) -> Fn:
        left, right = args

        def ev(doc: Any, vars: Any) -> Any:
            return test(cmp_values(left(doc, vars), right(doc, vars)))
        return ev


_comparison("$eq", lambda c: c == 0)
_comparison("$ne", lambda c: c != 0)
_comparison("$gt", lambda c: c > 0)
_comparison("$gte", lambda c: c >= 0)
_comparison("$lt", lambda c: c < 0)
_comparison("$lte", lambda c: c <= 0)
_comparison("$cmp", lambda c: c)


# ---- boolean ------------------------------------------------------------------------------


@nary("$and")
def _and(args: list[Fn]) -> Fn:
    if any(is_const(a) and not truthy(a.value) for a in args):  # type: ignore[attr-defined]
        return const(False)

    def ev(doc: Any, vars: Any) -> Any:
        for fn in args:
            if not truthy(fn(doc, vars)):
                return False
        return True
    return ev


@nary("$or")
def _or(args: list[Fn]) -> Fn:
    if any(is_const(a) and truthy(a.value) for a in args):  # type: ignore[attr-defined]
        return const(True)

    def ev(doc: Any, vars: Any) -> Any:
        for fn in args:
            if truthy(fn(doc, vars)):
                return True
        return False
    return ev


@nary("$not", 1, 1)
def _not(args: list[Fn]) -> Fn:
    (arg,) = args
    return lambda doc, vars: not truthy(arg(doc, vars))


# ---- conditionals -------------------------------------------------------------------------


@operator("$cond")
def _cond(spec: Any, scope: Scope) -> Fn:
    if isinstance(spec, dict):
        parts: dict[str, Fn] = {}
        for key, value in spec.items():
            if key not in ("if", "then", "else"):
                raise CommandError(ErrorCode.CondUnknownParameter,
                                   f"Unrecognized parameter to $cond: {key}")
            parts[key] = compile_node(value, scope)
        for key, code in (("if", ErrorCode.CondMissingIf), ("then", ErrorCode.CondMissingThen),
                          ("else", ErrorCode.CondMissingElse)):
            if key not in parts:
                raise CommandError(code, f"Missing '{key}' parameter to $cond")
        cond, then, other = parts["if"], parts["then"], parts["else"]
    else:
        cond, then, other = parse_args("$cond", spec, scope, 3, 3)

    def ev(doc: Any, vars: Any) -> Any:
        return then(doc, vars) if truthy(cond(doc, vars)) else other(doc, vars)
    if getattr(cond, "is_const", False):
        return then if truthy(cond.value) else other  # type: ignore[attr-defined]
    return ev


@operator("$ifNull")
def _if_null(spec: Any, scope: Scope) -> Fn:
    args = parse_args("$ifNull", spec, scope)
    if len(args) < 2:
        raise CommandError(ErrorCode.IfNullTooFewArgs,
                           f"$ifNull needs at least two arguments, had: {len(args)}")
    *firsts, last = args

    def ev(doc: Any, vars: Any) -> Any:
        for fn in firsts:
            v = fn(doc, vars)
            if not nullish(v):
                return v
        return last(doc, vars)
    return fold(ev, args)


@operator("$switch")
def _switch(spec: Any, scope: Scope) -> Fn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.SwitchArgNotObject,
                           "$switch requires an object as an argument, found: "
                           f"{_tname(spec)}")
    branches: list[tuple[Fn, Fn]] = []
    default: Fn | None = None
    for key, value in spec.items():
        if key == "branches":
            if not isinstance(value, list):
                raise CommandError(ErrorCode.SwitchBranchesNotArray,
                                   "$switch expected an array for 'branches', found: "
                                   f"{_tname(value)}")
            branches = _switch_branches(value, scope)
        elif key == "default":
            default = compile_node(value, scope)
        else:
            raise CommandError(ErrorCode.SwitchUnknownArgument,
                               f"$switch found an unknown argument: {key}")
    if not branches:
        raise CommandError(ErrorCode.SwitchWithoutBranches, "$switch requires at least one branch.")
    live = []
    for case, then in branches:
        if is_const(case):
            if truthy(case.value):  # type: ignore[attr-defined]
                return then if live == [] else _switch_fn(live + [(case, then)], default)
            continue
        live.append((case, then))
    if not live and default is not None:
        return default
    return _switch_fn(live, default)


def _switch_fn(branches: list[tuple[Fn, Fn]], default: Fn | None) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        for case, then in branches:
            if truthy(case(doc, vars)):
                return then(doc, vars)
        if default is None:
            raise CommandError(ErrorCode.SwitchNoMatchingBranch,
                               "$switch could not find a matching branch for an input, "
                               "and no default was specified.")
        return default(doc, vars)
    return ev


def _switch_branches(specs: list, scope: Scope) -> list[tuple[Fn, Fn]]:
    out = []
    reachable = True
    for spec in specs:
        if reachable:
            case, then = _switch_branch(spec, scope, True)
            if is_const(case) and truthy(case.value):  # type: ignore[attr-defined]
                reachable = False
        else:
            with defer_fold_errors():
                case, then = _switch_branch(spec, scope, False)
        out.append((case, then))
    return out


def _switch_branch(branch: Any, scope: Scope, reachable: bool) -> tuple[Fn, Fn]:
    if not isinstance(branch, dict):
        raise CommandError(ErrorCode.SwitchBranchNotObject,
                           "$switch expected each branch to be an object, found: "
                           f"{_tname(branch)}")
    case = then = None
    for key, _value in branch.items():
        if key not in ("case", "then"):
            raise CommandError(ErrorCode.SwitchBranchUnknownArgument,
                               f"$switch found an unknown argument to a branch: {key}")
    if "case" in branch:
        case = compile_node(branch["case"], scope)
    if "then" in branch:
        if reachable and case is not None and is_const(case) and \
                not truthy(case.value):  # type: ignore[attr-defined]
            with defer_fold_errors():
                then = compile_node(branch["then"], scope)
        else:
            then = compile_node(branch["then"], scope)
    if case is None:
        raise CommandError(ErrorCode.SwitchBranchMissingCase,
                           "$switch requires each branch have a 'case' expression")
    if then is None:
        raise CommandError(ErrorCode.SwitchBranchMissingThen,
                           "$switch requires each branch have a 'then' expression.")
    return case, then


def _tname(v: Any) -> str:
    from .values import type_name
    return type_name(v)


# ---- $literal and $let --------------------------------------------------------------------


@operator("$literal")
def _literal(spec: Any, scope: Scope) -> Fn:
    return const(spec)


@operator("$const")
def _const(spec: Any, scope: Scope) -> Fn:
    return const(spec)


@operator("$let")
def _let(spec: Any, scope: Scope) -> Fn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.LetArgNotObject,
                           "$let only supports an object as its argument")
    var_spec = body_spec = None
    has_in = False
    for key, value in spec.items():
        if key == "vars":
            var_spec = value
        elif key == "in":
            body_spec, has_in = value, True
        else:
            raise CommandError(ErrorCode.LetUnknownParameter,
                               f"Unrecognized parameter to $let: {key}")
    if "vars" not in spec:
        raise CommandError(ErrorCode.LetMissingVars, "Missing 'vars' parameter to $let")
    if not has_in:
        raise CommandError(ErrorCode.LetMissingIn, "Missing 'in' parameter to $let")
    if isinstance(var_spec, list):
        var_spec = {str(i): v for i, v in enumerate(var_spec)}
    if not isinstance(var_spec, dict):
        raise CommandError(ErrorCode.ExpectedObjectParameter,
                           "invalid parameter: expected an object (vars)")
    bindings = []
    for name, value in var_spec.items():
        validate_var_write(name)
        bindings.append((name, compile_node(value, scope)))
    body = compile_node(body_spec, scope.bind(*var_spec))
    return _let_fn(bindings, body)


def _let_fn(bindings: list[tuple[str, Fn]], body: Fn) -> Fn:
    from .compiler import bind_current
    current = [fn for name, fn in bindings if name == "CURRENT"]
    others = [(name, fn) for name, fn in bindings if name != "CURRENT"]

    def ev(doc: Any, vars: Any) -> Any:
        inner = dict(vars) if vars else {}
        for name, fn in others:
            inner[name] = fn(doc, vars)
        if current:
            doc, inner = bind_current(inner, doc, current[0](doc, vars))
        return body(doc, inner)
    return ev
