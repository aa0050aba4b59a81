"""Stages that read other collections: $lookup, $graphLookup, $unionWith.

The equality form of $lookup indexes the foreign collection once per run in a hash map keyed by
`hash_key` (so 1, 1.0 and NumberLong(1) meet), then joins each input document with dict lookups.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bson.dbref import DBRef
from bson.int64 import Int64

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr import MISSING
from ginkgodb.query.expr.compiler import Fn, compile_node, get_path, reject_unknown_fields, validate_var_write
from ginkgodb.query.expr.values import bson_repr, hash_key, type_name
from ginkgodb.query.operation import check_interrupt, checked

from .core import Env, Runtime, StageFn, chain, parse_stages, stage
from .fields import set_doc_path, validate_path

_LOOKUP_FIELDS = ("from", "as", "localField", "foreignField", "let", "pipeline")


# ---- value collection with query semantics ------------------------------------------------------


def match_values(doc: Any, parts: list[str], i: int = 0, out: list | None = None) -> list:
    """Every value a query on `parts` compares against: leaf arrays and their elements, null for
    a branch where the path is missing (so local null meets foreign missing, as $eq: null does)."""
    if out is None:
        out = []
    if i == len(parts):
        out.append(doc)
        if type(doc) is list:
            out.extend(doc)
        return out
    if type(doc) is DBRef:  # a DBRef is the document {$ref, $id, $db, ...}
        doc = doc.as_doc()
    if isinstance(doc, dict):
        if parts[i] in doc:
            match_values(doc[parts[i]], parts, i + 1, out)
        else:
            out.append(None)
    elif type(doc) is list:
        found = False
        for elem in doc:
            if isinstance(elem, (dict, DBRef)):
                match_values(elem, parts, i, out)
                found = True
        if parts[i].isdigit() and int(parts[i]) < len(doc):
            match_values(doc[int(parts[i])], parts, i + 1, out)
            found = True
        if not found:
            out.append(None)
    else:
        out.append(None)
    return out


def local_values(doc: dict, parts: list[str]) -> list:
    """The values an input document offers to the join (arrays expanded); [null] if none."""
    out: list = []
    _extract(doc, parts, 0, out)
    return out or [None]


def _extract(v: Any, parts: list[str], i: int, out: list) -> None:
    if i == len(parts):
        if type(v) is list:
            out.extend(v)
        else:
            out.append(v)
    elif type(v) is DBRef:
        _extract(v.as_doc(), parts, i, out)
    elif isinstance(v, dict):
        if parts[i] in v:
            _extract(v[parts[i]], parts, i + 1, out)
    elif type(v) is list:
        for elem in v:
            if isinstance(elem, (dict, DBRef)):
                _extract(elem, parts, i, out)


def _simple_join(docs: Iterator[dict], index: ForeignIndex, local: str, as_field: str
                 ) -> Iterator[dict]:
    """Top-level localField and `as`: the benchmark-shaped $lookup, one dict probe per doc."""
    lookup, pool = index.index.get, index.docs
    for doc in docs:
        v = doc.get(local)
        if type(v) is list:
            matched = index.matching(v if v else [])
        else:
            t = type(v)
            positions = lookup(v if t is str or t is int else hash_key(v), ())
            matched = [pool[p] for p in positions]
        out = dict(doc)
        out[as_field] = matched
        yield out


class ForeignIndex:
    """foreign docs by the hash key of every value their field holds, in collection order."""

    def __init__(self, docs: list[dict], parts: list[str]) -> None:
        self.docs = docs
        index: dict[Any, list[int]] = {}
        for pos, doc in enumerate(checked(docs)):
            seen = set()
            for v in match_values(doc, parts):
                k = hash_key(v)
                if k not in seen:
                    seen.add(k)
                    index.setdefault(k, []).append(pos)
        self.index = index

    def matching(self, values: list) -> list[dict]:
        index, docs = self.index, self.docs
        if len(values) == 1:
            return [docs[p] for p in index.get(hash_key(values[0]), ())]
        positions: set[int] = set()
        for v in values:
            positions.update(index.get(hash_key(v), ()))
        return [docs[p] for p in sorted(positions)]


# ---- $lookup ------------------------------------------------------------------------------------


def _bad(msg: str, code: ErrorCode = ErrorCode.FailedToParse) -> CommandError:
    return CommandError(code, msg)


def _string_field(spec: dict, name: str) -> str | None:
    if name not in spec:
        return None
    v = spec[name]
    if name == "as" and v is None:
        return None
    if type(v) is not str:
        raise _bad(f"BSON field '$lookup.{name}' is the wrong type '{type_name(v)}', expected "
                   "type 'string'", ErrorCode.TypeMismatch)
    return v


def _from(spec: dict, starts_with_documents: bool) -> str | None:
    if "from" not in spec:
        if not starts_with_documents:
            raise _bad("$lookup requires 'from' unless the pipeline starts with $documents")
        return None
    coll = spec["from"]
    if isinstance(coll, dict):
        for key, value in coll.items():
            if key not in ("db", "coll"):
                raise _bad(f"BSON field '$lookup.from.{key}' is an unknown field.",
                           ErrorCode.IDLUnknownField)
            if type(value) is not str:
                raise _bad(f"BSON field '$lookup.from.{key}' is the wrong type "
                           f"'{type_name(value)}', expected type 'string'", ErrorCode.TypeMismatch)
        raise _bad("$lookup with 'from' as an object {db, coll} is only supported for certain "
                   "system collections")
    if type(coll) is not str:
        raise _bad(f"$lookup 'from' field must be a string or an object, but found "
                   f"{type_name(coll)}")
    if not coll or "\0" in coll or coll.startswith(".") or starts_with_documents:
        raise _bad(f"Invalid $lookup namespace: {coll!r}", ErrorCode.InvalidNamespace)
    return coll


def _validate_as(path: str) -> list[str]:
    return validate_path(path)


def _let(spec: dict, env: Env) -> list[tuple[str, Fn]]:
    if spec.get("let") is None:
        return []
    let = spec["let"]
    if not isinstance(let, dict):
        raise _bad(f"BSON field '$lookup.let' is the wrong type '{type_name(let)}', expected type "
                   "'object'", ErrorCode.TypeMismatch)
    out = []
    for name, value in let.items():
        try:
            validate_var_write(name)
        except CommandError as exc:
            raise _bad(exc.errmsg) from None
        out.append((name, compile_node(value, env.scope)))
    return out


@stage("$lookup")
def parse_lookup(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise _bad(f"the $lookup stage specification must be an object, but found "
                   f"{type_name(spec)}")
    reject_unknown_fields("$lookup", spec, _LOOKUP_FIELDS)
    if not spec:
        raise _bad("$lookup requires 'from' and 'as' to be specified")
    pipeline = spec.get("pipeline")
    if "pipeline" in spec and not isinstance(pipeline, list):
        raise _bad(f"BSON field '$lookup.pipeline' is the wrong type '{type_name(pipeline)}', "
                   "expected type 'array'", ErrorCode.TypeMismatch)
    starts_with_documents = bool(pipeline) and isinstance(pipeline[0], dict) and \
        "$documents" in pipeline[0]
    as_field = _string_field(spec, "as")
    local, foreign = _string_field(spec, "localField"), _string_field(spec, "foreignField")
    if as_field is None:
        raise _bad("BSON field '$lookup.as' is missing but a required field",
                   ErrorCode.IDLFailedToParse)
    coll = _from(spec, starts_with_documents)
    as_parts = _validate_as(as_field)
    if spec.get("let") is not None and pipeline is None:
        _let(spec, env)
        raise _bad("$lookup with 'let' must also specify 'pipeline'")
    if (local is None) != (foreign is None):
        raise _bad("$lookup requires both or neither of 'localField' and 'foreignField'")
    if local is None and pipeline is None:
        raise _bad("$lookup requires either 'pipeline' or both 'localField' and 'foreignField' "
                   "to be specified")
    let = _let(spec, env)
    sub = None
    if pipeline is not None:
        sub_env = env.with_vars(name for name, _ in let).sub(in_lookup=True)
        sub = [fn for _, fn in parse_stages(pipeline, sub_env)]
    local_parts = validate_path(local) if local is not None else None
    foreign_parts = validate_path(foreign) if foreign is not None else None
    return _lookup_fn(coll, as_parts, local_parts, foreign_parts, let, sub, id(spec))


def _foreign_docs(rt: Runtime, coll: str | None, key: Any) -> list[dict]:
    cache_key = ("docs", coll, key)
    docs = rt.cache.get(cache_key)
    if docs is None:
        docs = [] if coll is None else list(rt.ctx.collection_docs(rt.ctx.db, coll, None))
        rt.cache[cache_key] = docs
    return docs


def _lookup_fn(coll: str | None, as_parts: list[str], local: list[str] | None,
               foreign: list[str] | None, let: list[tuple[str, Fn]], sub: list | None,
               ident: int) -> StageFn:
    top_local = local[0] if local is not None and len(local) == 1 else None
    top_as = as_parts[0] if len(as_parts) == 1 else None

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        foreign_docs = _foreign_docs(rt, coll, ident)
        index = ForeignIndex(foreign_docs, foreign) if local is not None else None
        if index is not None and sub is None and top_local is not None and top_as is not None:
            return _simple_join(docs, index, top_local, top_as)
        return _join(docs, rt, foreign_docs, index)

    def _join(docs: Iterator[dict], rt: Runtime, foreign_docs: list, index: Any
              ) -> Iterator[dict]:
        uncorrelated_cache: list | None = None
        for doc in docs:
            candidates = index.matching(local_values(doc, local)) if index is not None \
                else foreign_docs
            if sub is None:
                results = candidates
            elif not let and index is None:
                if uncorrelated_cache is None:
                    uncorrelated_cache = list(chain(sub, candidates, rt))
                results = uncorrelated_cache
            else:
                inner = rt.with_vars({name: fn(doc, rt.vars) for name, fn in let})
                results = list(chain(sub, candidates, inner))
            yield set_doc_path(doc, as_parts, list(results))
    return run


# ---- $graphLookup ---------------------------------------------------------------------------------

_GRAPH_FIELDS = ("from", "startWith", "connectFromField", "connectToField", "as", "maxDepth",
                 "depthField", "restrictSearchWithMatch")


@stage("$graphLookup")
def parse_graph_lookup(spec: Any, env: Env) -> StageFn:
    if not isinstance(spec, dict):
        raise _bad("the $graphLookup stage specification must be an object")
    for key, value in spec.items():
        if key not in _GRAPH_FIELDS:
            raise CommandError(ErrorCode.GraphLookupUnknownArgument,
                               f"Unknown argument to $graphLookup: {key}")
        if key in ("from", "connectFromField", "connectToField", "as", "depthField") and \
                not isinstance(value, str):
            raise CommandError(ErrorCode.GraphLookupArgNotString,
                               f"expected string as argument for {key}, found: "
                               f"{type_name(value)}")
    for key in ("startWith", "connectFromField", "connectToField", "from", "as"):
        if key not in spec:
            raise CommandError(ErrorCode.GraphLookupMissingArgument,
                               "must specify 'startWith', 'connectFromField', "
                               "'connectToField', 'from', and 'as' for $graphLookup")
    max_depth = _max_depth(spec.get("maxDepth"))
    restrict = spec.get("restrictSearchWithMatch")
    matcher = None
    if restrict is not None:
        if not isinstance(restrict, dict):
            raise CommandError(ErrorCode.GraphLookupRestrictNotObject,
                               "expected object as argument for restrictSearchWithMatch, "
                               f"found: {type_name(restrict)}")
        from ginkgodb.query.match import compile_filter
        if "$$" in repr(restrict):
            matcher = restrict
        else:
            matcher = compile_filter(restrict, variables=env.ctx.variables, where=False).match
    start = compile_node(spec["startWith"], env.scope)
    return _graph_fn(spec["from"], start, validate_path(spec["connectFromField"]),
                     validate_path(spec["connectToField"]), validate_path(spec["as"]),
                     max_depth, validate_path(spec["depthField"]) if "depthField" in spec
                     else None, matcher, id(spec))


def _max_depth(v: Any) -> int | None:
    if v is None:
        return None
    from ginkgodb.query.expr.values import as_int64, num_kind
    if num_kind(v) < 0 or isinstance(v, bool):
        raise CommandError(ErrorCode.GraphLookupMaxDepthNotNumeric,
                           f"maxDepth must be numeric, found type: {type_name(v)}")
    n = as_int64(v)
    if n is None:
        raise CommandError(ErrorCode.GraphLookupMaxDepthNotLong,
                           f"maxDepth could not be represented as a long long, found: "
                           f"{bson_repr(v)}")
    if n < 0:
        raise CommandError(ErrorCode.GraphLookupMaxDepthNegative,
                           f"maxDepth requires a nonnegative argument, found: {n}")
    return n


def _graph_fn(coll: str, start: Fn, from_parts: list[str], to_parts: list[str],
              as_parts: list[str], max_depth: int | None, depth_parts: list[str] | None,
              matcher: Any, ident: int) -> StageFn:
    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        pool = _foreign_docs(rt, coll, ident)
        if isinstance(matcher, dict):
            from ginkgodb.query.match import compile_filter
            match = compile_filter(matcher, variables=rt.vars, where=False).match
            pool = [d for d in pool if match(d)]
        elif matcher is not None:
            pool = [d for d in pool if matcher(d)]
        index = ForeignIndex(pool, to_parts)
        for doc in docs:
            v = start(doc, rt.vars)
            frontier = v if type(v) is list else [None if v is MISSING else v]
            found: dict[Any, tuple[dict, int]] = {}
            depth = 0
            while frontier and (max_depth is None or depth <= max_depth):
                check_interrupt()
                next_values = []
                for d in index.matching(frontier):
                    k = hash_key(d.get("_id"))
                    if k in found:
                        continue
                    found[k] = (d, depth)
                    nv = get_path(d, from_parts)
                    if nv is not MISSING:
                        next_values.extend(nv if type(nv) is list else [nv])
                frontier = next_values
                depth += 1
            results = []
            for d, dep in found.values():
                results.append(set_doc_path(d, depth_parts, Int64(dep)) if depth_parts else d)
            yield set_doc_path(doc, as_parts, results)
    return run


# ---- $unionWith ----------------------------------------------------------------------------------


@stage("$unionWith")
def parse_union_with(spec: Any, env: Env) -> StageFn:
    pipeline: list = []
    if isinstance(spec, str):
        coll: str | None = spec
    elif isinstance(spec, dict):
        reject_unknown_fields("$unionWith", spec, ("coll", "pipeline"))
        coll = spec.get("coll")
        pipeline = spec.get("pipeline", [])
        if not isinstance(pipeline, list):
            raise _bad("BSON field '$unionWith.pipeline' is the wrong type, expected type "
                       "'array'", ErrorCode.TypeMismatch)
        if coll is None and not (pipeline and isinstance(pipeline[0], dict)
                                 and "$documents" in pipeline[0]):
            raise _bad("$unionWith stage without explicit collection must have a pipeline with "
                       "$documents as first stage")
        if coll is not None and not isinstance(coll, str):
            raise _bad(f"BSON field '$unionWith.coll' is the wrong type '{type_name(coll)}', "
                       "expected type 'string'", ErrorCode.TypeMismatch)
    else:
        raise _bad("the $unionWith stage specification must be an object or string, but found "
                   f"{type_name(spec)}")
    sub = [fn for _, fn in parse_stages(pipeline, env.sub(in_lookup=True))]

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        yield from docs
        other = rt.ctx.collection_docs(rt.ctx.db, coll, None) if coll is not None else ()
        yield from chain(sub, other, rt)
    return run
