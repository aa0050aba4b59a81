"""$function (an expression) and $accumulator (a $group accumulator) in JavaScript."""
from __future__ import annotations

from typing import Any

from bson.code import Code

from ginkgodb.errors import CommandError, ErrorCode

from .convert import dumps, loads
from .operation import current
from .sandbox import ScriptError


class JsFunction:
    """A function body compiled lazily in each operation's sandbox; `call(this, args)`."""

    __slots__ = ("source",)

    def __init__(self, source: str) -> None:
        self.source = source

    def call(self, this: Any, args: list, wrap: str = "call") -> Any:
        op = current()
        box = op.sandbox("js")
        fid = box.compiled(self.source)
        if fid is None:
            fid = box.function(self.source, op.limit())
        if fid is None:
            raise CommandError(ErrorCode.FunctionBodyDidNotEvaluate, "The body function did not evaluate")
        try:
            out = box.call(fid, None if this is None else dumps(this), dumps(args), op.limit())
        except (TimeoutError, MemoryError, ScriptError) as exc:
            raise op.failure(exc, wrap) from None
        return loads(out)


def require_scripting() -> None:
    """Refuse now, at parse time, when the operation's server has scripting disabled."""
    current().require("js")


# ---- $function ------------------------------------------------------------------------------

def parse_function(spec: Any, compile_operand: Any, type_name: Any) -> tuple[JsFunction, Any]:
    """(function, args expression) of `{$function: {body, args, lang}}`, with mongod's errors."""
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.FunctionArgNotObject,
                           f"$function requires an object as an argument, found: {type_name(spec)}")
    if "body" not in spec:
        raise CommandError(ErrorCode.FunctionBodyMissing, "The body function must be specified.")
    body = compile_operand(spec["body"])
    if not getattr(body, "is_const", False):
        raise CommandError(ErrorCode.FunctionBodyNotConstant, "The body function must be a constant expression")
    source = body.value
    if not isinstance(source, (str, Code)):
        raise CommandError(ErrorCode.FunctionBodyNotString, "The body function must evaluate to type string or code")
    if "args" not in spec:
        raise CommandError(ErrorCode.FunctionArgsMissing, "The args field must be specified.")
    args = compile_operand(spec["args"])
    if "lang" not in spec:
        raise CommandError(ErrorCode.FunctionLangMissing, "The lang field must be specified.")
    if spec["lang"] != "js":
        raise CommandError(ErrorCode.FunctionLangNotJs, "Currently the only supported language specifier is 'js'.")
    require_scripting()
    return JsFunction(str(source)), args


def call_function(fn: JsFunction, args: Any) -> Any:
    if type(args) is not list:
        raise CommandError(ErrorCode.FunctionArgsNotArray, "The args field must be of type array")
    return fn.call(None, args)


# ---- $accumulator ---------------------------------------------------------------------------

_ACCUMULATOR_FIELDS = ("init", "accumulate", "merge", "finalize", "initArgs", "accumulateArgs", "lang")


def parse_accumulator(spec: Any, compile_operand: Any, type_name: Any) -> dict:
    """The parts of `{$accumulator: {...}}`: functions by name, and the two argument expressions."""
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.AccumulatorArgNotObject,
                           f"$accumulator expects an object as an argument; found: {type_name(spec)}")
    parts: dict = {}
    for name, value in spec.items():
        if name in ("init", "accumulate", "merge", "finalize"):
            expr = compile_operand(value)
            if not getattr(expr, "is_const", False):
                raise CommandError(ErrorCode.AccumulatorFunctionNotConstant,
                                   f"$accumulator '{name}' must be a constant expression")
            if not isinstance(expr.value, (str, Code)):
                raise CommandError(ErrorCode.AccumulatorFunctionNotString,
                                   f"$accumulator '{name}' must be a String or Code")
            parts[name] = JsFunction(str(expr.value))
        elif name in ("initArgs", "accumulateArgs"):
            parts[name] = compile_operand(value)
        elif name == "lang":
            if type(value) is not str:
                raise CommandError(ErrorCode.AccumulatorLangNotString,
                                   f"$accumulator lang must be a string; found: {type_name(value)}")
            if value != "js":
                raise CommandError(ErrorCode.AccumulatorLangNotJs, "$accumulator only supports lang: 'js'")
        else:
            raise CommandError(ErrorCode.AccumulatorUnknownField, f"$accumulator got an unexpected field: {name}")
    for name, code in (("init", ErrorCode.AccumulatorMissingInit),
                       ("accumulate", ErrorCode.AccumulatorMissingAccumulate),
                       ("merge", ErrorCode.AccumulatorMissingMerge)):
        if name not in parts:
            raise CommandError(code, f"$accumulator missing required argument '{name}'")
    if "accumulateArgs" not in parts:
        raise CommandError(ErrorCode.AccumulatorMissingAccumulateArgs,
                           "$accumulator missing required argument 'accumulateArgs'")
    require_scripting()
    return parts


class AccumulatorState:
    """One group's $accumulator: init(...initArgs) once, accumulate(state, ...args) per document,
    finalize(state) at the end. merge is never needed: a standalone never splits a group."""

    __slots__ = ("parts", "init_args", "state", "started", "show")

    def __init__(self, parts: dict, init_args: Any, show: Any) -> None:
        self.parts, self.init_args, self.state, self.started, self.show = parts, init_args, None, False, show

    def add(self, doc: Any, vars: Any) -> None:
        if not self.started:
            args = self.init_args
            if type(args) is not list:
                raise CommandError(ErrorCode.AccumulatorInitArgsNotArray,
                                   f"$accumulator initArgs must evaluate to an array: {self.show(args)}")
            self.state = self.parts["init"].call(None, args)
            self.started = True
        args = self.parts["accumulateArgs"](doc, vars)
        if type(args) is not list:
            raise CommandError(ErrorCode.AccumulatorAccumulateArgsNotArray,
                               f"$accumulator accumulateArgs must evaluate to an array: {self.show(args)}")
        self.state = self.parts["accumulate"].call(None, [self.state, *args])

    def result(self) -> Any:
        finalize = self.parts.get("finalize")
        return finalize.call(None, [self.state]) if finalize is not None else self.state
