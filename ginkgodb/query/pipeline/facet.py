"""$facet: several sub-pipelines over the same input, one output document."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr.values import type_name

from .core import Env, Runtime, StageFn, chain, parse_stages, stage, stage_name

_NOT_IN_FACET = frozenset({"$facet", "$out", "$merge", "$collStats", "$indexStats", "$geoNear",
                           "$changeStream", "$currentOp", "$planCacheStats", "$search",
                           "$searchMeta", "$vectorSearch", "$documents", "$listLocalSessions",
                           "$changeStreamSplitLargeEvent", "$querySettings", "$listSearchIndexes",
                           "$listCatalog", "$listClusterCatalog", "$searchBeta", "$queryStats",
                           "$listSampledQueries"})


@stage("$facet")
def parse_facet(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict) or not spec:
        raise CommandError(ErrorCode.FacetSpecNotObject,
                           "the $facet specification must be a non-empty object, but "
                           f"found: {type_name(spec) if not isinstance(spec, dict) else '{}'}")
    facets = []
    for name, pipeline in spec.items():
        _validate_name(name)
        if not isinstance(pipeline, list):
            raise CommandError(ErrorCode.FacetPipelineNotArray,
                               f"arguments to $facet must be arrays, {name} is type "
                               f"{type_name(pipeline)}")
        for st in pipeline:
            if not isinstance(st, dict):
                raise CommandError(ErrorCode.FacetStageNotObject,
                                   f"subpipeline stages for $facet must be objects, "
                                   f"{name} contains a stage of type {type_name(st)}")
            if len(st) == 1 and stage_name(st) in _NOT_IN_FACET:
                raise CommandError(ErrorCode.StageNotAllowedInFacet,
                                   f"{stage_name(st)} is not allowed to be used within a "
                                   "$facet stage")
        facets.append((name, [fn for _, fn in parse_stages(pipeline, env.sub(in_facet=True))]))

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        inputs = list(docs)
        yield {name: list(chain(stages, inputs, rt)) for name, stages in facets}
    return run


def _validate_name(name: str) -> None:
    from ginkgodb.query.expr.compiler import validate_field_name
    validate_field_name(name)
    if "." in name:
        raise CommandError(ErrorCode.FieldPathContainsDot,
                           "FieldPath field names may not contain '.'.")
