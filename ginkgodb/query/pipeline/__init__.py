"""The aggregation pipeline over decoded documents.

`compile_pipeline(stages, ctx)` validates and compiles every stage once and returns a callable
`pipeline(docs) -> Iterator[dict]`; `run_pipeline(stages, docs, ctx)` does both. Stages the engine
owns ($out, $merge, $collStats, ...) are not handled here.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ginkgodb.query.expr.compiler import Scope

from . import basic, bucket, facet, fill, group, lookup, sorting, unpack_bucket, unsupported, windows  # noqa: F401
from .context import PipelineContext
from .core import ENGINE_STAGES, STAGES, Env, Runtime, StageFn, chain, parse_stages
from .sorting import sort_stage

__all__ = ["PipelineContext", "Pipeline", "compile_pipeline", "run_pipeline", "STAGES",
           "ENGINE_STAGES"]


class Pipeline:
    """A compiled pipeline; call it with an iterable of documents for an iterator of results."""

    __slots__ = ("ctx", "names", "stages")

    def __init__(self, ctx: PipelineContext, names: list[str], stages: list[StageFn]) -> None:
        self.ctx, self.names, self.stages = ctx, names, stages

    def __call__(self, docs: Iterable[dict]) -> Iterator[dict]:
        rt = Runtime(self.ctx, self.ctx.run_variables())
        return chain(self.stages, docs, rt)


def compile_pipeline(stages: Any, ctx: PipelineContext | None = None) -> Pipeline:
    ctx = ctx or PipelineContext()
    env = Env(ctx, Scope(ctx.variables, open_=False))
    parsed = parse_stages(stages, env)
    names = [name for name, _ in parsed]
    fns = _coalesce_sort_limit(stages, parsed)
    return Pipeline(ctx, names, fns)


def run_pipeline(stages: Any, docs: Iterable[dict], ctx: PipelineContext | None = None
                 ) -> Iterator[dict]:
    return compile_pipeline(stages, ctx)(docs)


def _coalesce_sort_limit(specs: list, parsed: list[tuple[str, StageFn]]) -> list[StageFn]:
    """$sort followed by $skip/$limit keeps only the top skip+limit documents (heap top-k)."""
    out: list[StageFn] = []
    for i, (name, fn) in enumerate(parsed):
        if name == "$sort":
            k = _following_limit(parsed, i + 1)
            if k is not None:
                fn = sort_stage(specs[i]["$sort"], limit=k)
        out.append(fn)
    return out


def _following_limit(parsed: list[tuple[str, StageFn]], j: int) -> int | None:
    skipped = 0
    while j < len(parsed):
        name, fn = parsed[j]
        if name == "$skip":
            skipped += fn.skip  # type: ignore[attr-defined]
        elif name == "$limit":
            return skipped + fn.limit  # type: ignore[attr-defined]
        else:
            return None
        j += 1
    return None

