"""Document operators: $mergeObjects, $getField, $setField, $unsetField."""
from __future__ import annotations

from typing import Any

from ginkgodb.errors import CommandError, ErrorCode

from .compiler import Fn, Scope, compile_node, nary, operator
from .values import MISSING, nullish, type_name


def merge_objects(values: list[Any]) -> dict:
    out: dict = {}
    for _i, v in enumerate(values):
        if nullish(v):
            continue
        if not isinstance(v, dict):
            raise CommandError(ErrorCode.MergeObjectsInputNotObject,
                               f"$mergeObjects requires object inputs, but input "
                               f"{_show(v)} is of type {type_name(v)}")
        out.update(v)
    return out


def _show(v: Any) -> str:
    from .values import bson_repr
    return bson_repr(v)


@nary("$mergeObjects")
def _merge_objects(args: list[Fn]) -> Fn:
    if len(args) == 1:
        (arg,) = args

        def ev1(doc: Any, vars: Any) -> Any:
            v = arg(doc, vars)
            return merge_objects(v if type(v) is list else [v])
        return ev1
    return lambda doc, vars: merge_objects([fn(doc, vars) for fn in args])


def _check_const_field(name: str, spec: Any, scope: Scope) -> str:
    """$setField/$unsetField take a constant string field name (no '$' paths)."""
    if isinstance(spec, str):
        if spec.startswith("$"):
            raise CommandError(ErrorCode.SetFieldFieldIsPath,
                               f"{name}: 'field' cannot be a field path: {spec}")
        value = spec
    else:
        fn = compile_node(spec, scope)
        literal_shape = isinstance(spec, list) or (isinstance(spec, dict) and spec and
                                                   not next(iter(spec)).startswith("$"))
        if not getattr(fn, "is_const", False) or literal_shape:
            raise CommandError(ErrorCode.SetFieldFieldNotConstant,
                               f"{name} requires 'field' to evaluate to a constant, but "
                               "got a non-constant argument")
        value = fn.value  # type: ignore[attr-defined]
    if type(value) is not str:
        raise CommandError(ErrorCode.SetFieldFieldNotString,
                           f"{name} requires 'field' to evaluate to type String, but "
                           f"got {type_name(value)}")
    if "\0" in value:
        raise CommandError(ErrorCode.SetFieldFieldContainsNull,
                           f"{name}: 'field' must not contain an embedded null byte")
    return value


def _named(name: str, spec: Any, allowed: tuple[str, ...]) -> dict:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.SetFieldArgNotObject,
                           f"{name} only supports an object as its argument")
    for key in spec:
        if key not in allowed:
            raise CommandError(ErrorCode.SetFieldUnknownArgument,
                               f"{name} found an unknown argument: {key}")
    for key, code in (("field", ErrorCode.SetFieldMissingField),
                      ("value", ErrorCode.SetFieldMissingValue),
                      ("input", ErrorCode.SetFieldMissingInput)):
        if key in allowed and key not in spec:
            raise CommandError(code, f"{name} requires '{key}' to be specified")
    return spec


@operator("$getField")
def _get_field(spec: Any, scope: Scope) -> Fn:
    from .compiler import _current_fn
    if isinstance(spec, dict) and spec and not next(iter(spec)).startswith("$"):
        for key in spec:
            if key not in ("field", "input"):
                raise CommandError(ErrorCode.GetFieldUnknownArgument,
                                   f"$getField found an unknown argument: {key}")
        if "field" not in spec:
            raise CommandError(ErrorCode.GetFieldMissingField,
                               "$getField requires 'field' to be specified")
        if "input" not in spec:
            raise CommandError(ErrorCode.GetFieldMissingInput,
                               "$getField requires 'input' to be specified")
        field = compile_node(spec["field"], scope)
        inp = compile_node(spec["input"], scope)
    elif isinstance(spec, dict) and not spec:
        raise CommandError(ErrorCode.GetFieldMissingField,
                           "$getField requires 'field' to be specified")
    else:
        field = compile_node(spec, scope)
        inp = _current_fn([])
    if getattr(field, "is_const", False):
        _field_string(field.value)  # type: ignore[attr-defined]

    def ev(doc: Any, vars: Any) -> Any:
        name = _field_string(field(doc, vars))
        obj = inp(doc, vars)
        if not isinstance(obj, dict):
            return None if obj is None else MISSING
        return obj.get(name, MISSING)
    return ev


def _field_string(v: Any) -> str:
    if type(v) is not str:
        raise CommandError(ErrorCode.GetFieldFieldNotString,
                           "$getField requires 'field' to evaluate to type String, but "
                           f"got {type_name(v)}")
    return v


def _set(name: str, field: str, inp: Fn, value: Fn | None) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        obj = inp(doc, vars)
        if nullish(obj):
            return None
        if not isinstance(obj, dict):
            raise CommandError(ErrorCode.SetFieldInputNotObject,
                               f"{name} requires 'input' to evaluate to type Object, "
                               f"but got {type_name(obj)}")
        out = dict(obj)
        v = value(doc, vars) if value is not None else MISSING
        if v is MISSING:
            out.pop(field, None)
        else:
            out[field] = v
        return out
    return ev


@operator("$setField")
def _set_field(spec: Any, scope: Scope) -> Fn:
    _named("$setField", spec, ("field", "input", "value"))
    field = _check_const_field("$setField", spec["field"], scope)
    return _set("$setField", field, compile_node(spec["input"], scope),
                compile_node(spec["value"], scope))


@operator("$unsetField")
def _unset_field(spec: Any, scope: Scope) -> Fn:
    _named("$unsetField", spec, ("field", "input"))
    field = _check_const_field("$unsetField", spec["field"], scope)
    return _set("$unsetField", field, compile_node(spec["input"], scope), None)
