"""Compile an aggregation expression spec into a closure `fn(doc, vars) -> value`.

Every node compiles once into a Python closure; evaluation is then a tree of plain calls.
`doc` is $$CURRENT (normally the root document) and `vars` a dict of variable values or None.
When $$CURRENT is rebound (by `$let: {vars: {CURRENT: ...}}`) the root travels in `vars["ROOT"]`;
system names are upper case and user names may not be, so the two never clash.

Nodes whose children are all constants are evaluated at compile time, as mongod's optimize()
does, so a constant error such as `{$divide: [1, 0]}` is reported before any document is read.
"""
from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable
from typing import Any

from bson.dbref import DBRef

from ginkgodb.bsonutil.paths import refused_dollar_name
from ginkgodb.errors import CommandError, ErrorCode

from .values import MISSING, bson_repr

Fn = Callable[[Any, Any], Any]
Parser = Callable[[Any, "Scope"], Fn]

OPERATORS: dict[str, Parser] = {}

SYSTEM_VARS = frozenset({"ROOT", "CURRENT", "REMOVE", "NOW", "CLUSTER_TIME", "USER_ROLES",
                         "SEARCH_META", "JS_SCOPE", "IS_MR"})


class Scope:
    """Variables visible at a point of the expression tree.

    `open` scopes accept any user variable name and look it up at run time (the caller's `let`
    values arrive with the documents); closed scopes reject unknown names at compile time.
    """

    __slots__ = ("names", "open")

    def __init__(self, names: Iterable[str] = (), open_: bool = True) -> None:
        self.names = frozenset(names)
        self.open = open_

    def bind(self, *names: str) -> Scope:
        return Scope(self.names.union(names), self.open)

    def knows(self, name: str) -> bool:
        return self.open or name in self.names or name in SYSTEM_VARS


def operator(name: str) -> Callable[[Parser], Parser]:
    """Register `parse(arg_spec, scope) -> Fn` for the expression operator `name`."""
    def deco(parse: Parser) -> Parser:
        OPERATORS[name] = parse
        return parse
    return deco


# ---- constants ---------------------------------------------------------------------------


def const(value: Any) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        return value
    ev.is_const = True  # type: ignore[attr-defined]
    ev.value = value  # type: ignore[attr-defined]
    return ev


def is_const(fn: Fn) -> bool:
    return getattr(fn, "is_const", False)


_deferring = [0]


class defer_fold_errors:
    """Within this block constant folding keeps errors for run time: mongod never optimizes
    the parts of an expression it has proven unreachable (e.g. a $switch branch after a
    constant-true case), so their constant errors must not surface at parse time."""

    def __enter__(self) -> None:
        _deferring[0] += 1

    def __exit__(self, *exc: Any) -> None:
        _deferring[0] -= 1


def fold(fn: Fn, args: Iterable[Fn]) -> Fn:
    """Replace `fn` by its value when every argument is a constant."""
    if all(is_const(a) for a in args):
        if not _deferring[0]:
            return const(fn(None, None))
        try:
            return const(fn(None, None))
        except CommandError:
            return fn
    return fn


# ---- arguments and arity -----------------------------------------------------------------


def arg_list(spec: Any) -> list[Any]:
    """An operator's operand: an array is the argument list, anything else one argument."""
    return list(spec) if isinstance(spec, list) else [spec]


def parse_args(name: str, spec: Any, scope: Scope, lo: int = 0, hi: int | None = None) -> list[Fn]:
    args = arg_list(spec)
    check_arity(name, len(args), lo, hi)
    return [compile_node(a, scope) for a in args]


def check_arity(name: str, n: int, lo: int, hi: int | None) -> None:
    if hi is not None and lo == hi and n != lo:
        raise CommandError(ErrorCode.ExpressionArgCountExact,
                           f"Expression {name} takes exactly {lo} arguments. "
                           f"{n} were passed in.")
    if hi is not None and not lo <= n <= hi:
        raise CommandError(ErrorCode.ExpressionArgCountRange,
                           f"Expression {name} takes at least {lo} arguments, and at most "
                           f"{hi}, but {n} were passed in.")


def nary(name: str, lo: int = 0, hi: int | None = None, *, foldable: bool = True
         ) -> Callable[[Callable[[list[Fn]], Fn]], Callable[[list[Fn]], Fn]]:
    """Register an operator taking a list of expression arguments; `build(args) -> Fn`."""
    def deco(build: Callable[[list[Fn]], Fn]) -> Callable[[list[Fn]], Fn]:
        def parse(spec: Any, scope: Scope) -> Fn:
            args = parse_args(name, spec, scope, lo, hi)
            fn = build(args)
            return fold(fn, args) if foldable else fn
        OPERATORS[name] = parse
        return build
    return deco


def reject_unknown_fields(prefix: str, spec: dict, allowed: Iterable[str]) -> None:
    """mongod's IDL check of a specification: a field it does not define fails."""
    for key in spec:
        if key not in allowed:
            raise CommandError(ErrorCode.IDLUnknownField,
                               f"BSON field '{prefix}.{key}' is an unknown field.")


def named_args(name: str, spec: Any, scope: Scope, allowed: Iterable[str],
               unknown_code: ErrorCode,
               not_object: tuple[ErrorCode, str] | None = None) -> dict[str, Fn]:
    """Parse `{field: expr, ...}` operands, rejecting unknown fields as mongod does."""
    if not isinstance(spec, dict):
        code, msg = not_object or (ErrorCode.FailedToParse,
                                   f"{name} only supports an object as its argument")
        raise CommandError(code, msg)
    allowed = set(allowed)
    out = {}
    for key, value in spec.items():
        if key not in allowed:
            raise CommandError(unknown_code, f"Unrecognized parameter to {name}: {key}")
        out[key] = compile_node(value, scope)
    return out


# ---- the compiler ------------------------------------------------------------------------


def compile_node(spec: Any, scope: Scope) -> Fn:
    """Compile any expression value: field path, variable, operator, object, array or literal."""
    t = type(spec)
    if t is str:
        if spec[:1] == "$":
            return compile_path(spec, scope)
        return const(spec)
    if t is dict or isinstance(spec, dict):
        if spec and next(iter(spec))[:1] == "$":
            return compile_operator(spec, scope)
        return compile_object(spec, scope)
    if t is list:
        return compile_array(spec, scope)
    return const(spec)


def compile_operator(spec: dict, scope: Scope) -> Fn:
    if len(spec) != 1:
        raise CommandError(ErrorCode.ExpressionObjectNotSingleField,
                           "An object representing an expression must have exactly one "
                           f"field: {bson_repr(spec)}")
    (name, arg), = spec.items()
    parse = OPERATORS.get(name)
    if parse is None:
        raise CommandError(ErrorCode.InvalidPipelineOperator, f"Unrecognized expression '{name}'")
    return parse(arg, scope)


def validate_field_name(name: str) -> None:
    if not name:
        raise CommandError(ErrorCode.FieldPathEmptyName,
                           "FieldPath field names may not be empty strings.")
    if refused_dollar_name(name):
        raise CommandError(ErrorCode.FieldPathDollarPrefixed,
                           "FieldPath field names may not start with '$'. "
                           "Consider using $getField or $setField.")
    if "\0" in name:
        raise CommandError(ErrorCode.FieldPathContainsNull,
                           "FieldPath field names may not contain '\\0'.")


def compile_object(spec: dict, scope: Scope) -> Fn:
    """`{a: <expr>, ...}`: fields whose value is missing are left out of the result."""
    items = []
    for key, value in spec.items():
        validate_field_name(key)
        if "." in key:
            raise CommandError(ErrorCode.FieldPathContainsDot,
                               "FieldPath field names may not contain '.'. "
                               "Consider using $getField or $setField.")
        items.append((key, compile_node(value, scope)))
    if not items:
        return const({})

    def ev(doc: Any, vars: Any) -> Any:
        out = {}
        for key, fn in items:
            v = fn(doc, vars)
            if v is not MISSING:
                out[key] = v
        return out
    return fold(ev, [fn for _, fn in items])


def compile_array(spec: list, scope: Scope) -> Fn:
    """`[<expr>, ...]`: missing elements become null."""
    fns = [compile_node(v, scope) for v in spec]

    def ev(doc: Any, vars: Any) -> Any:
        out = []
        for fn in fns:
            v = fn(doc, vars)
            out.append(None if v is MISSING else v)
        return out
    return fold(ev, fns)


# ---- field paths and variables -----------------------------------------------------------


def parse_field_path(path: str) -> list[str]:
    """The parts of an expression FieldPath, validated (mongod's codes for bad names)."""
    if path.endswith("."):
        raise CommandError(ErrorCode.FieldPathTrailingDot, "FieldPath must not end with a '.'.")
    parts = path.split(".")
    for p in parts:
        validate_field_name(p)
    return parts


def get_path(doc: dict, parts: list[str], i: int = 0) -> Any:
    """Resolve parts[i:] in `doc` as mongod's ExpressionFieldPath does: through arrays of
    documents a path yields an array of the values found (non-documents are skipped)."""
    n = len(parts)
    while True:
        v = doc.get(parts[i], MISSING)
        i += 1
        if i == n:
            return v
        if isinstance(v, dict):
            doc = v
        elif isinstance(v, list):
            return _get_path_array(v, parts, i)
        elif type(v) is DBRef:  # a DBRef is the document {$ref, $id, $db, ...}
            doc = v.as_doc()
        else:
            return MISSING


def _get_path_array(arr: list, parts: list[str], i: int) -> list:
    out = []
    for e in arr:
        if type(e) is DBRef:
            e = e.as_doc()
        if isinstance(e, dict):
            r = get_path(e, parts, i)
            if r is not MISSING:
                out.append(r)
    return out


def path_from_value(v: Any, parts: list[str]) -> Any:
    """Resolve `parts` inside an arbitrary value (a variable's value)."""
    if not parts:
        return v
    if type(v) is DBRef:
        v = v.as_doc()
    if isinstance(v, dict):
        return get_path(v, parts)
    if isinstance(v, list):
        return _get_path_array(v, parts, 0)
    return MISSING


def compile_path(raw: str, scope: Scope) -> Fn:
    if raw.startswith("$$"):
        return compile_variable(raw[2:], scope)
    if raw == "$":
        raise CommandError(ErrorCode.FieldPathDollarAlone, "'$' by itself is not a valid FieldPath")
    parts = parse_field_path(raw[1:])
    return field_path_fn(parts)


def field_path_fn(parts: list[str]) -> Fn:
    """A closure reading a path of $$CURRENT; specialised for the common one- and two-part paths."""
    if len(parts) == 1:
        key = parts[0]

        def ev1(doc: Any, vars: Any) -> Any:
            return doc.get(key, MISSING)
        ev1.field_path = key  # type: ignore[attr-defined]
        return ev1
    if len(parts) == 2:
        k1, k2 = parts

        def ev2(doc: Any, vars: Any) -> Any:
            v = doc.get(k1, MISSING)
            if type(v) is dict:
                return v.get(k2, MISSING)
            if isinstance(v, list):
                return _get_path_array(v, parts, 1)
            if isinstance(v, dict):
                return v.get(k2, MISSING)
            if type(v) is DBRef:
                return v.as_doc().get(k2, MISSING)
            return MISSING
        ev2.field_path = ".".join(parts)  # type: ignore[attr-defined]
        return ev2

    def evn(doc: Any, vars: Any) -> Any:
        return get_path(doc, parts)
    evn.field_path = ".".join(parts)  # type: ignore[attr-defined]
    return evn


def validate_var_read(name: str) -> None:
    if not name:
        raise CommandError(ErrorCode.FailedToParse, "empty variable names are not allowed")
    c = name[0]
    if not (c.isascii() and c.isalpha()) and c.isascii():
        raise CommandError(ErrorCode.VariableNameBadFirstChar,
                           f"'{name}' starts with an invalid character for a user "
                           "variable name")
    for ch in name[1:]:
        if ch.isascii() and not (ch.isalnum() or ch == "_"):
            raise CommandError(ErrorCode.VariableNameBadChar,
                               f"'{name}' contains an invalid character for a variable "
                               f"name: '{ch}'")


def validate_var_write(name: str) -> None:
    """A name a user may bind ($let, `as`, `let`): lower-case first letter, then word chars."""
    if name == "CURRENT":
        return
    if not name:
        raise CommandError(ErrorCode.FailedToParse, "empty variable names are not allowed")
    c = name[0]
    if c.isascii() and not ("a" <= c <= "z"):
        raise CommandError(ErrorCode.FailedToParse, f"'{name}' starts with an invalid character "
                                                    "for a user variable name")
    for ch in name[1:]:
        if ch.isascii() and not (ch.isalnum() or ch == "_"):
            raise CommandError(ErrorCode.FailedToParse, f"'{name}' contains an invalid character "
                                                        f"for a variable name: '{ch}'")


def compile_variable(text: str, scope: Scope) -> Fn:
    name, _, rest = text.partition(".")
    validate_var_read(name)
    if text.endswith(".") and "." in text:
        raise CommandError(ErrorCode.FieldPathTrailingDot, "FieldPath must not end with a '.'.")
    parts = parse_field_path(rest) if rest else []
    if name == "CURRENT":
        return _current_fn(parts)
    if name == "ROOT":
        return _root_fn(parts)
    if name == "REMOVE":
        return const(MISSING)
    if name == "NOW":
        return _system_fn("NOW", parts, default=now_millis_utc())
    if name == "CLUSTER_TIME":
        return _system_fn("CLUSTER_TIME", parts, default=_cluster_time())
    if name not in scope.names and not (scope.open and name not in SYSTEM_VARS):
        raise CommandError(ErrorCode.UndefinedVariable, f"Use of undefined variable: {name}")

    def ev(doc: Any, vars: Any) -> Any:
        try:
            v = vars[name]
        except (KeyError, TypeError):
            raise CommandError(ErrorCode.UndefinedVariable,
                               f"Use of undefined variable: {name}") from None
        return path_from_value(v, parts) if parts else v
    ev.variable = name  # type: ignore[attr-defined]
    return ev


def _current_fn(parts: list[str]) -> Fn:
    if parts:
        inner = field_path_fn(parts)

        def ev(doc: Any, vars: Any) -> Any:
            if vars and "CURRENT" in vars:
                return path_from_value(vars["CURRENT"], parts)
            return inner(doc, vars)
        return ev

    def ev0(doc: Any, vars: Any) -> Any:
        if vars and "CURRENT" in vars:
            return vars["CURRENT"]
        return doc
    return ev0


def _root_fn(parts: list[str]) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        root = vars.get("ROOT", doc) if vars else doc
        return path_from_value(root, parts) if parts else root
    return ev


def _system_fn(name: str, parts: list[str], default: Any) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        v = vars.get(name, default) if vars else default
        return path_from_value(v, parts) if parts else v
    return ev


def now_millis_utc() -> datetime.datetime:
    """The current time as BSON stores dates: naive UTC, millisecond precision."""
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def _cluster_time() -> Any:
    import time

    from bson.timestamp import Timestamp
    return Timestamp(int(time.time()), 1)


def bind_current(vars: Any, doc: Any, value: Any) -> tuple[Any, dict]:
    """(new doc, new vars) for evaluating with $$CURRENT rebound to `value`."""
    inner = dict(vars) if vars else {}
    inner.setdefault("ROOT", doc)
    inner["CURRENT"] = value
    return (value if isinstance(value, dict) else {}), inner
