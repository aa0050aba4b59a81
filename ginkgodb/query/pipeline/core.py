"""Stage registry and pipeline compilation.

A stage parser turns `(spec, env)` into a *stage function* `run(docs, rt) -> Iterator[dict]`.
`env` carries compile-time facts (the expression scope, the context); `rt` (a `Runtime`) the
per-run ones (variables with $$NOW, the context, caches). Compiling once and running many times
keeps per-document work to the closures built here.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr.compiler import Scope
from ginkgodb.query.operation import checked

from .context import PipelineContext

StageFn = Callable[[Iterator[dict], "Runtime"], Iterator[dict]]
StageParser = Callable[[Any, "Env"], StageFn]

STAGES: dict[str, StageParser] = {}
MAX_NESTING = 20
MAX_STAGES = 1000

# Stages the engine runs itself (they read catalogs or write collections).
ENGINE_STAGES = frozenset({"$out", "$merge", "$collStats", "$indexStats", "$currentOp",
                           "$changeStream", "$listSessions", "$listLocalSessions",
                           "$planCacheStats", "$listSearchIndexes", "$listCatalog",
                           "$shardedDataDistribution", "$querySettings", "$queryStats"})
FIRST_ONLY = frozenset({"$documents", "$collStats", "$indexStats", "$currentOp", "$changeStream",
                        "$listSessions", "$listLocalSessions", "$geoNear", "$planCacheStats",
                        "$search", "$searchMeta", "$vectorSearch", "$queryStats"})


def stage(*names: str) -> Callable[[StageParser], StageParser]:
    def deco(parser: StageParser) -> StageParser:
        for name in names:
            STAGES[name] = parser
        return parser
    return deco


class Env:
    """Compile-time environment: the context and the variables in scope."""

    __slots__ = ("ctx", "scope", "in_facet", "in_lookup", "position", "depth")

    def __init__(self, ctx: PipelineContext, scope: Scope, in_facet: bool = False,
                 in_lookup: bool = False, depth: int = 0) -> None:
        self.ctx, self.scope, self.in_facet, self.in_lookup = ctx, scope, in_facet, in_lookup
        self.position, self.depth = 0, depth

    def with_vars(self, names: Iterable[str]) -> Env:
        return Env(self.ctx, self.scope.bind(*names), self.in_facet, self.in_lookup, self.depth)

    def sub(self, *, in_facet: bool = False, in_lookup: bool = False) -> Env:
        depth = self.depth + 1
        if depth > MAX_NESTING:
            raise CommandError(ErrorCode.MaxSubPipelineDepthExceeded,
                               "Maximum number of nested sub-pipelines exceeded. Limit is "
                               f"{MAX_NESTING}")
        return Env(self.ctx, self.scope, self.in_facet or in_facet, self.in_lookup or in_lookup,
                   depth)


class Runtime:
    """Per-run state: the variables every expression sees and a cache for build-once data."""

    __slots__ = ("ctx", "vars", "cache")

    def __init__(self, ctx: PipelineContext, vars: dict[str, Any]) -> None:
        self.ctx, self.vars, self.cache = ctx, vars, {}

    def with_vars(self, extra: dict[str, Any]) -> Runtime:
        rt = Runtime(self.ctx, {**self.vars, **extra})
        rt.cache = self.cache
        return rt


def stage_name(spec: Any) -> str:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.TypeMismatch,
                           "Each element of the 'pipeline' array must be an object")
    if len(spec) != 1:
        raise CommandError(ErrorCode.StageSpecNotSingleField,
                           "A pipeline stage specification object must contain exactly "
                           "one field.")
    return next(iter(spec))


def parse_stages(stages: Any, env: Env) -> list[tuple[str, StageFn]]:
    if not isinstance(stages, list):
        raise CommandError(ErrorCode.TypeMismatch, "'pipeline' option must be specified as an "
                                                   "array")
    if len(stages) > MAX_STAGES:
        raise CommandError(ErrorCode.PipelineTooLong,
                           f"Pipeline length must be no longer than {MAX_STAGES} "
                           "stages.")
    out = []
    for i, spec in enumerate(stages):
        name = stage_name(spec)
        if env.in_lookup and name in ("$out", "$merge"):
            raise CommandError(ErrorCode.StageNotAllowedInLookup,
                               f"{name} is not allowed within a $lookup's sub-pipeline")
        if env.in_lookup and name == "$changeStream":
            raise CommandError(ErrorCode.ChangeStreamNotAllowed,
                               "$changeStream is only valid as the first stage in a "
                               "pipeline")
        if name in FIRST_ONLY and i != 0:
            raise CommandError(ErrorCode.StageOnlyValidFirst,
                               f"{name} is only valid as the first stage in a pipeline")
        parser = STAGES.get(name)
        if parser is None:
            if name in ENGINE_STAGES:
                raise CommandError(ErrorCode.NotImplemented, f"{name} is not supported here")
            raise CommandError(ErrorCode.UnrecognizedPipelineStage,
                               f"Unrecognized pipeline stage name: '{name}'")
        env.position = i
        out.append((name, parser(spec[name], env)))
    return out


def chain(stages: list[StageFn], docs: Iterable[dict], rt: Runtime) -> Iterator[dict]:
    """The stages over `docs`; every stage's input checks for interruption as it is consumed
    (killOp, maxTimeMS), so no stage can loop over many documents unchecked."""
    it: Iterator[dict] = iter(docs)
    for fn in stages:
        it = fn(checked(it), rt)
    return it
