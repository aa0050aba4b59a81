"""Document operators: $mergeObjects, $getField, $setField, $unsetField."""
from __future__ import annotations

from typing import Any

from ginkgodb.errors import CommandError

from .compiler import Fn, Scope, compile_node, nary, operator
from .values import MISSING, nullish, type_name


def merge_objects(values: list[Any]) -> dict:
    out: dict = {}
    for i, v in enumerate(values):
        if nullish(v):
            continue
        if not isinstance(v, dict):
            raise CommandError(40400, f"$mergeObjects requires object inputs, but input "
                                      f"{_show(v)} is of type {type_name(v)}")
        out.update(v)
    return out


def _show(v: Any) -> str:
    from .values import bson_repr
    return bson_repr(v)


@nary("$mergeObjects")
def _merge_objects(args: list[Fn]) -> Fn:
    return lambda doc, vars: merge_objects([fn(doc, vars) for fn in args])


def _field_name(name: str, spec: Any, scope: Scope) -> str:
    fn = compile_node(spec, scope)
    if not getattr(fn, "is_const", False):
        raise CommandError(5654601, f"{name} requires 'field' to evaluate to a constant, but got "
                                    "a non-constant argument")
    value = fn.value  # type: ignore[attr-defined]
    if type(value) is not str:
        raise CommandError(5654602, f"{name} requires 'field' to evaluate to type String, but got"
                                    f" {type_name(value)}")
    return value


def _named(name: str, spec: Any, allowed: tuple[str, ...], codes: dict[str, int]) -> dict:
    for key in spec:
        if key not in allowed:
            raise CommandError(codes["unknown"], f"{name} found an unknown argument: {key}")
    for key in allowed:
        if key not in spec:
            raise CommandError(codes[key], f"{name} requires '{key}' to be specified")
    return spec


@operator("$getField")
def _get_field(spec: Any, scope: Scope) -> Fn:
    from .compiler import _current_fn
    if isinstance(spec, dict) and spec and not next(iter(spec)).startswith("$"):
        _named("$getField", spec, ("field", "input"),
               {"unknown": 3041701, "field": 3041702, "input": 3041703})
        field = _field_name("$getField", spec["field"], scope)
        inp = compile_node(spec["input"], scope)
    else:
        field = _field_name("$getField", spec, scope)
        inp = _current_fn([])

    def ev(doc: Any, vars: Any) -> Any:
        obj = inp(doc, vars)
        if nullish(obj):
            return None if obj is not MISSING else MISSING
        if not isinstance(obj, dict):
            raise CommandError(3041705, "$getField requires 'input' to evaluate to type Object, "
                                        f"but got {type_name(obj)}")
        return obj.get(field, MISSING)
    return ev


def _set(name: str, field: str, inp: Fn, value: Fn | None) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        obj = inp(doc, vars)
        if nullish(obj):
            return None
        if not isinstance(obj, dict):
            raise CommandError(4161105, f"{name} requires 'input' to evaluate to type Object, "
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
    if not isinstance(spec, dict):
        raise CommandError(4161100, f"$setField only supports an object as its argument")
    _named("$setField", spec, ("field", "input", "value"),
           {"unknown": 4161101, "field": 4161102, "input": 4161103, "value": 4161104})
    field = _field_name("$setField", spec["field"], scope)
    return _set("$setField", field, compile_node(spec["input"], scope),
                compile_node(spec["value"], scope))


@operator("$unsetField")
def _unset_field(spec: Any, scope: Scope) -> Fn:
    if not isinstance(spec, dict):
        raise CommandError(4161100, f"$unsetField only supports an object as its argument")
    _named("$unsetField", spec, ("field", "input"),
           {"unknown": 4161101, "field": 4161102, "input": 4161103})
    field = _field_name("$unsetField", spec["field"], scope)
    return _set("$unsetField", field, compile_node(spec["input"], scope), None)
