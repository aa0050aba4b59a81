"""From a find-shaped request to a tree of stages, and the explain document for it."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import bson

from ..bsonutil import collation, keycodec
from ..planner.choose import IndexPlan, QueryPlan, plan_query
from ..planner.fast import fast_plan
from ..planner.parsed_query import ParsedQuery, id_point_key
from ..query import metadata
from ..query.external_sort import Spill
from ..query.match import compile_filter
from ..query.projection import compile_projection
from . import plan_stages as S
from . import text_synonyms
from .covered import CoveredKeys, covered_fields, simple_projection
from .no_wait import UnboundedPlan
from .plan_cache import PlanCacheEntry, cache_key_hash, shape_hash, shape_key


@dataclass(init=False)
class FindRequest:
    filter: dict = field(default_factory=dict)
    sort: Optional[dict] = None
    projection: Optional[dict] = None
    skip: int = 0
    limit: int = 0
    hint: Any = None
    collation: Optional[dict] = None
    variables: Optional[dict] = None   # the command's `let`
    allow_disk_use: Optional[bool] = None  # None: the server's allowDiskUseByDefault
    temp_dir: Optional[str] = None     # where a spilling sort writes (None: the system's)
    min_key: Optional[dict] = None     # find's `min`: the scan starts at this index key ...
    max_key: Optional[dict] = None     # ... and `max`: stops before this one (both need `hint`)
    return_key: bool = False           # results are the index keys, not the documents
    show_record_id: bool = False       # results carry `$recordId`
    text_score: Optional[bool] = None  # $text: True, the caller reads the textScore field and removes
    #                                    it (a pipeline); None, a find (its projection or sort may ask)
    geo_near: Any = None               # $geoNear: what to add to each result (GeoNearOutput)
    near_metadata: bool = False        # a near query: the caller reads the geoNearDistance and
    #                                    geoNearPoint fields and removes them (a pipeline)
    #: (the metadata names it was compiled with, the projection) as find's command compiled it,
    #: reused by the plan when it would compile it with the same names; None: the plan compiles it
    compiled_projection: Any = None
    #: the read runs on the server's event loop: `build` raises UnboundedPlan, before reading
    #: anything, unless the plan reads at most one index entry and document per result (IDHACK,
    #: or a shortcut plan `bounded_fast` accepts), so that a batch of bounded size is bounded
    #: work (the inline policies of commands/find.py and inline_writes.py bound the batch)
    bounded: bool = False

    def __init__(self, **given: Any) -> None:
        """Only the fields given are set on the instance, the others are read from the class
        (every find, update and delete builds one; the generated __init__ assigned all 18)."""
        if not _REQUEST_FIELDS.issuperset(given):
            raise TypeError(f"FindRequest has no field {sorted(set(given) - _REQUEST_FIELDS)}")
        self.__dict__.update(given)
        if "filter" not in given:
            self.filter = {}


    @classmethod
    def of_find(cls, filter: dict, sort: Optional[dict], projection: Optional[dict], skip: int, limit: int,
                hint: Any, collation: Optional[dict], variables: Optional[dict], min_key: Optional[dict],
                max_key: Optional[dict], return_key: bool, show_record_id: bool,
                allow_disk_use: Optional[bool]) -> FindRequest:
        """A find command's request, every field it sets given in order: what
        FindRequest(filter=..., ...) builds, without packing and checking keywords (every find
        builds one)."""
        req = cls.__new__(cls)
        req.__dict__ = {"filter": filter, "sort": sort, "projection": projection, "skip": skip, "limit": limit,
                        "hint": hint, "collation": collation, "variables": variables, "min_key": min_key,
                        "max_key": max_key, "return_key": return_key, "show_record_id": show_record_id,
                        "allow_disk_use": allow_disk_use}
        return req


_REQUEST_FIELDS = frozenset(FindRequest.__dataclass_fields__)


class BuiltPlan:
    """The stages of one query, with its plan for explain and its filter compiled on demand."""

    index_filter_set = False   # an index filter limited the plans (explain's indexFilterSet)

    def __init__(self, root: Any, plan: Any, rejected: list, req: FindRequest, matcher: Any = None) -> None:
        self.root, self.plan, self.rejected, self._req = root, plan, rejected, req
        self._matcher = matcher
        #: (keys_examined, docs_examined) in one call (every find's statistics read both): the
        #: root's own counter, bound here so that reading it is one call
        self.examined: Callable[[], tuple[int, int]] = root.counts

    def set_root(self, root: Any) -> None:
        """The stages over the plan's own (limit, projection, ...): they count as the root does."""
        self.root, self.examined = root, root.counts

    @property
    def plan_summary(self) -> str:
        return plan_summary(self.plan)

    @property
    def keys_examined(self) -> int:
        return self.root.keys_examined()

    @property
    def docs_examined(self) -> int:
        return self.root.docs_examined()

    @property
    def matcher(self) -> Any:
        """The whole filter, compiled (positional `$` needs it even when an index answered)."""
        if self._matcher is None and self._req.filter:
            self._matcher = cached_filter(self._req.filter, self._req)
        return self._matcher


def plan_summary(plan: QueryPlan) -> str:
    """mongod's planSummary: `COLLSCAN`, `IDHACK`, `IXSCAN { a: 1 }` (one per scan of an OR), `EOF`."""
    if plan.kind in ("IXSCAN", "OR") and plan.scans:
        from ..bsonutil.shell_format import format_document
        return ", ".join(f"IXSCAN {format_document(dict(p.index.key))}" for p in plan.scans)
    if plan.kind.startswith("GEO_NEAR") and plan.scans:
        from ..bsonutil.shell_format import format_document
        return f"{plan.kind} {format_document(dict(plan.scans[0].index.key))}"
    return plan.kind


_FILTER_CACHE: dict = {}
_FILTER_CACHE_SIZE = 512


class CollatedMatcher:
    """A filter under a non-simple collation: strings on both sides compared by their keys."""

    __slots__ = ("_inner", "_coll", "paths")

    def __init__(self, inner: Any, coll: Any) -> None:
        self._inner, self._coll, self.paths = inner, coll, inner.paths

    def match(self, doc: dict) -> bool:
        return self._inner.match(self._coll.transform(doc))

    __call__ = match

    def positional(self, doc: dict):
        return self._inner.positional(self._coll.transform(doc))


_COLLATIONS: dict = {}


def collation_of(spec: Optional[dict]) -> Any:
    """The Collation for a spec (None: simple), one object per distinct spec so key caches last."""
    if not spec:
        return None
    key = bson.encode(spec)
    if key not in _COLLATIONS:
        _COLLATIONS[key] = collation.from_spec(spec)
    return _COLLATIONS[key]


def cached_filter(spec: dict, req: FindRequest) -> Any:
    """compile_filter, remembered by the filter's BSON bytes: applications repeat their queries."""
    coll = collation_of(req.collation)
    if coll is not None:
        return CollatedMatcher(compile_filter(coll.transform_query(spec), variables=req.variables), coll)
    if req.variables:
        return compile_filter(spec, variables=req.variables)
    try:
        key = bson.encode(spec)
    except Exception:  # not encodable as given: let the compiler report it
        return compile_filter(spec)
    matcher = _FILTER_CACHE.get(key)
    if matcher is None:
        matcher = compile_filter(spec)
        if len(_FILTER_CACHE) >= _FILTER_CACHE_SIZE:
            _FILTER_CACHE.pop(next(iter(_FILTER_CACHE)))
        _FILTER_CACHE[key] = matcher
    return matcher


def sort_pairs(sort: Optional[dict]) -> list:
    if not sort:
        return []
    return [(k, v) for k, v in sort.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _plain_request(req: FindRequest, for_write: bool) -> bool:
    """No hint, sort, skip, collation, near search, record ids, nor (for a read) projection or
    returnKey: a request IDHACK or the shortcut planner may answer (on a collection without a
    default collation)."""
    return (req.geo_near is None and req.hint is None and req.collation is None
            and not (req.sort or req.skip or req.show_record_id)
            and (for_write or not (req.projection or req.return_key)))


def _plain(state, req: FindRequest, for_write: bool) -> bool:
    return state is not None and _plain_request(req, for_write) and not state.meta.options.get("collation")


def may_idhack(req: FindRequest) -> bool:
    """Whether the read `req` may be an IDHACK, told from the request alone (idhack_key decides,
    with the collection): a filter of `_id` alone and nothing IDHACK does not take."""
    filt = req.filter
    return type(filt) is dict and len(filt) == 1 and "_id" in filt and _plain_request(req, False)


def idhack_key(state, req: FindRequest) -> Optional[bytes]:
    """The encoded `_id` when `build` answers the read `req` on `state` with IDHACK (one probe
    of the `_id` index), else None."""
    return id_point_key(req.filter) if req.filter and _plain(state, req, False) else None


class PointPlan:
    """The counters of an IDHACK read answered without stages (reads.find_point): what query
    statistics read of a BuiltPlan."""

    __slots__ = ("keys_examined", "docs_examined")

    #: one plan shared by every such read (nothing changes a QueryPlan once built)
    plan = QueryPlan("IDHACK")
    plan_summary = "IDHACK"

    def __init__(self, keys_examined: int, docs_examined: int) -> None:
        self.keys_examined, self.docs_examined = keys_examined, docs_examined

    def examined(self) -> tuple[int, int]:
        return self.keys_examined, self.docs_examined


def build(state, reader, req: FindRequest, ctx=None, *, for_write: bool = False,
          explain: bool = False) -> BuiltPlan:
    """Plan and assemble stages. `for_write` skips projection (writers need whole documents).
    Explain builds exactly what a query runs; `explain` only keeps it out of `$indexStats`' accesses."""
    # plain: what the shortcut planner's test below would find (no hint, sort, collation or
    # coverable projection), and not an IDHACK
    plain = False
    if _plain(state, req, for_write):
        id_key = id_point_key(req.filter) if req.filter else None
        if id_key is not None:
            return _idhack(state, reader, req, id_key, explain)
        plain = True
    if state is not None and req.geo_near is not None and hasattr(req.geo_near, "near"):
        from ginkgodb.engine.geo_near import geo_near_filter  # absolute: see _geo_near
        req = replace(req, filter=geo_near_filter(state, req.geo_near))  # the $geoNear stage
    filt = req.filter or {}
    if state is None:
        _no_collection_text(filt, reader)
        return BuiltPlan(_Eof(), QueryPlan("EOF"), [], req, cached_filter(filt, req) if filt else None)
    if req.collation is None and state.meta.options.get("collation"):
        req = replace(req, collation=state.meta.options["collation"])  # the collection's default
    coll = collation_of(req.collation) if req.collation else None
    root: Any = None
    rejected: list = []
    index_filter = None
    covered = False
    query = ParsedQuery(filt)  # parsed once: IDHACK, the shortcut planner, bounds, implication
    if plain:     # the same filter was just found not to be an IDHACK
        shortcut, id_key = True, None
    else:
        shortcut = req.hint is None and not req.sort and not req.collation and not _may_cover(req, for_write)
        # `{_id: <plain value>}` names no $text and no near operator: IDHACK without looking for them
        id_key = query.id_key if shortcut else None
    idhack = id_key is not None
    caches = getattr(reader, "plan_caches", None) if reader is not None else None
    filtered = caches is not None and caches.has_filters(state.meta)   # index filters on the collection
    if shortcut and not idhack and filtered:
        shortcut = False   # an index filter may name another index than the shortcut's
    if req.bounded and not idhack and (not shortcut or req.skip or not _NO_TEXT_KEYS.isdisjoint(filt)):
        raise UnboundedPlan()   # not the shortcut planner's: planning alone may take long
    # _text_search's first test, inline: most filters name none of its keys
    text = None if idhack or _NO_TEXT_KEYS.isdisjoint(filt) else _text_search(state, reader, req, ctx, for_write)
    if text is not None:
        return text
    near = None if idhack else _near_operand(filt)
    if near is not None and req.bounded:
        raise UnboundedPlan()
    near_meta = False
    if near is not None:
        near_meta = not for_write and (req.near_metadata or metadata.mentions(req.projection, metadata.GEO_NEAR)
                                       or metadata.mentions(req.sort, metadata.GEO_NEAR))
        root, plan = _geo_near(state, reader, query, near, req, ctx, near_meta)
        exact = False
        if req.limit and (not req.sort or _natural(req.sort)):
            root.wanted = req.skip + abs(req.limit)   # sizes the search's rounds, never its results
        if req.sort and not _natural(req.sort):
            from ..query.sort import compile_sort
            keep = req.skip + req.limit if req.limit else 0
            with metadata.providing(*metadata.GEO_NEAR):
                key = compile_sort(req.sort).key
            root = S.SortStage(root, req.sort, key, keep, Spill.for_request(req.allow_disk_use, req.temp_dir))
    elif shortcut:
        if id_key is not None:
            root = S.IdHack(state, reader, id_key)
        else:
            root, fast = _fast(state, reader, query, req, ctx)
            if req.bounded and (root is None or not bounded_fast(fast)):
                raise UnboundedPlan()
        if root is not None:
            root.query_filter = filt
    if near is None and root is not None:
        exact = False
        plan = QueryPlan("IDHACK") if root.name == "IDHACK" else QueryPlan("IXSCAN", [IndexPlan(fast.index, None)])
    elif near is None:
        natural = _natural(req.sort)
        sort = None if natural else req.sort
        if sort:
            from ..query.sort import compile_sort
            sort_key = compile_sort(sort).key  # a bad spec fails even when an index gives the order
        usable = [ix for ix in state.indexes if collation.same(ix.collation, coll)]
        plan_query_ = query if coll is None else ParsedQuery(coll.transform_query(filt))
        bounded = req.min_key is not None or req.max_key is not None
        if bounded:
            _check_min_max_hint(req)
        shape = index_filter = None
        hint = req.hint
        if filtered and caches is not None:
            shape = shape_key(filt, req.sort, req.projection, req.collation)
            index_filter = caches.filter_for(state.meta, shape)
            if index_filter is not None:   # mongod: the filter's indexes only, and no hint
                usable = [ix for ix in usable if index_filter.allows(ix.meta)]
                if not bounded:
                    hint = None
        plan, rejected = plan_query(usable, plan_query_, sort_pairs(sort), hint)
        entry = None
        if rejected and _tied(plan, rejected[0]):
            if caches is None:
                plan, rejected, _, _ = _trial(state, reader, [plan, *rejected], filt, req)
            else:
                if shape is None:
                    shape = shape_key(filt, req.sort, req.projection, req.collation)
                plan, rejected, entry = _cached_or_trial(state, reader, caches.of(state.meta), shape,
                                                         [plan, *rejected], filt, req, explain)
        if natural and plan.kind == "COLLSCAN":
            plan.direction = natural
        if bounded:
            root, exact = _min_max_scan(state, reader, plan, filt, req, ctx)
        else:
            root, exact = _scan(state, reader, plan, filt, req, ctx)
            if exact and _may_cover(req, for_write) and plan.kind == "IXSCAN":
                root, covered = _covered(state, reader, plan, root, req)
        if isinstance(root, S.Fetch):
            root.query_filter = filt
        if entry is not None and not explain:
            entry.last_use = root   # the replanning rule reads what it examined (plan_cache.py)
        if sort and not plan.provides_sort:
            keep = req.skip + req.limit if req.limit else 0
            key = sort_key
            if coll is not None:
                key = _collated_key(key, coll)
            root = S.SortStage(root, sort, key, keep, Spill.for_request(req.allow_disk_use, req.temp_dir))
    built = BuiltPlan(root, plan, rejected, req)
    if index_filter is not None:
        built.index_filter_set = True
    if reader is not None and hasattr(reader, "depends_on"):
        if plan.kind == "IDHACK":   # depends on the collection alone: its _id index stays
            reads_by_id(state, reader, explain)
        else:
            ids = _index_ids(plan, root)
            reader.depends_on(state.meta.id, ids, state.meta.ns)
            if not explain:
                reader.note_use(ids)
    if req.skip:
        if exact and isinstance(root, S.Fetch) and root.matcher is None:
            root.child = S.SkipKeys(root.child, req.skip)  # skip index entries, not fetched documents
        else:
            root = S.Skip(root, req.skip)
    if req.limit and type(root) is not S.IdHack:   # IDHACK returns one document at most (mongod: no LIMIT)
        root = S.Limit(root, req.limit)
    if req.return_key and not for_write:
        root = S.ReturnKey(root, _keep_keys(root))  # mongod: returnKey takes the projection's place
    elif req.projection and not for_write:
        names = metadata.GEO_NEAR if near is not None else ()
        given = req.compiled_projection
        if given is not None and given[0] == names:
            compiled = given[1]
        else:
            with metadata.providing(*names):
                compiled = compile_projection(req.projection, query=req.filter)
        root = S.Project(root, req.projection, compiled, built)
        if covered:
            root.name = "PROJECTION_COVERED"
    if near_meta and not req.near_metadata:
        from .text_search import StripMetadata
        root = StripMetadata(root)
    if req.show_record_id and not for_write:
        root = S.ShowRecordId(root)
    built.set_root(root)
    return built


def _idhack(state, reader, req: FindRequest, id_key: bytes, explain: bool) -> BuiltPlan:
    """mongod's IDHACK path: `{_id: <plain value>}` with nothing around it (no sort, skip,
    projection, hint or collation) is one probe of the `_id` index, planned without the
    planner (what `build`'s general path gives such a query, built directly)."""
    root = S.IdHack(state, reader, id_key)
    root.query_filter = req.filter
    built = BuiltPlan(root, QueryPlan("IDHACK"), [], req)
    if reader is not None and hasattr(reader, "depends_on"):   # reads_by_id, inline
        reader.depends_on(state.meta.id, (), state.meta.ns)
        if not explain and state.id_index is not None:
            reader.note_use((state.id_index.meta.id,))
    return built


def reads_by_id(state, reader, explain: bool) -> None:
    """An IDHACK depends on the collection alone (its _id index stays) and is one access of
    the _id index for `$indexStats` (not when explained)."""
    reader.depends_on(state.meta.id, (), state.meta.ns)
    if not explain and state.id_index is not None:
        reader.note_use((state.id_index.meta.id,))


def _no_collection_text(filt: dict, reader) -> None:
    """mongod looks the text index up when it parses `$text`: without a collection, 27."""
    from ..planner.text_plans import has_text
    if filt and has_text(filt):
        from ..errors import CommandError, ErrorCode
        raise CommandError(ErrorCode.IndexNotFound, "text index required for $text query")


#: a filter naming none of these at its top has no $text anywhere
_NO_TEXT_KEYS = frozenset({"$text", "$and", "$or", "$nor"})


def _text_search(state, reader, req: FindRequest, ctx, for_write: bool) -> Optional[BuiltPlan]:
    """A `$text` query's plan and stages (engine/text_search.py), or None without `$text`."""
    filt = req.filter or {}
    if _NO_TEXT_KEYS.isdisjoint(filt):  # every find asks: answered without walking the filter
        return None
    from ..planner.text_plans import has_text, plan_text
    if not has_text(filt):
        return None
    from .text_search import StripMetadata, text_root
    if req.min_key is not None or req.max_key is not None:
        _check_min_max_hint(req)  # min/max need a hint, which $text refuses
    tplan = plan_text(state.indexes, filt, req.hint, req.sort, lambda spec: cached_filter(spec, req))
    if text_synonyms.source_of(tplan.index.meta) is not None:   # the index's synonyms, as of this snapshot
        tplan.query = text_synonyms.expanded(tplan.query, tplan.index.meta, reader, state.meta.db)
    wants = not for_write and (bool(req.text_score) or metadata.mentions(req.projection)
                               or metadata.mentions(req.sort))
    root: Any = text_root(state, reader, tplan, wants, lambda spec: cached_filter(spec, req), ctx)
    plan = QueryPlan("IXSCAN", [IndexPlan(tplan.index.meta, None)] + [p for p in tplan.or_scans])
    if reader is not None and hasattr(reader, "depends_on"):
        reader.depends_on(state.meta.id, tuple(p.index.id for p in plan.scans), state.meta.ns)
    with metadata.providing(metadata.TEXT_SCORE):
        if req.sort:
            from ..query.sort import compile_sort
            from .text_search import ScoreOrder, order_by_score
            keep = req.skip + req.limit if req.limit else 0
            key = compile_sort(req.sort).key
            if len(req.sort) == 1 and metadata.mentions(req.sort) and order_by_score(root):
                root = ScoreOrder(root, req.sort, key, keep)
            else:
                root = S.SortStage(root, req.sort, key, keep, Spill.for_request(req.allow_disk_use, req.temp_dir))
        if req.skip:
            root = S.Skip(root, req.skip)
        if req.limit:
            root = S.Limit(root, req.limit)
        built = BuiltPlan(root, plan, [], req, tplan.compiled)
        if req.return_key and not for_write:
            from ..errors import CommandError, ErrorCode
            raise CommandError(ErrorCode.NotImplemented, "returnKey with $text is not supported by ginkgodb")
        if req.projection and not for_write:
            root = S.Project(root, req.projection, compile_projection(req.projection, query=req.filter), built)
    if wants and not req.text_score:
        root = StripMetadata(root)
    if req.show_record_id and not for_write:
        root = S.ShowRecordId(root)
    built.set_root(root)
    return built


def _near_operand(filt: dict) -> Any:
    """The filter's top-level near operand, or None (most filters: one cheap look)."""
    if not filt or not _may_mention_near(filt):
        return None
    from ginkgodb.engine.geo_near import near_operand  # absolute: see _geo_near
    return near_operand(filt)


_NEAR_KEYS = frozenset({"$near", "$nearSphere", "$geoNear"})
_LOGICAL = frozenset({"$and", "$or", "$nor"})


def _may_mention_near(value: dict) -> bool:
    """Whether a near operator appears anywhere an operator can (sub-documents and the branches
    of logical operators; never inside values such as a long $in list)."""
    if not _NEAR_KEYS.isdisjoint(value):
        return True
    for k, v in value.items():
        if isinstance(v, dict) and _may_mention_near(v):
            return True
        if k in _LOGICAL and isinstance(v, list) and any(isinstance(b, dict) and _may_mention_near(b) for b in v):
            return True
    return False


def _geo_near(state, reader, query: ParsedQuery, near: Any, req: FindRequest, ctx,
              with_metadata: bool = False) -> tuple:
    """A GEO_NEAR_2DSPHERE / GEO_NEAR_2D stage for the filter's near operand (`with_metadata`:
    each result carries its geoNearDistance and geoNearPoint, query/metadata.py)."""
    # loaded on the first near query; an absolute import, as a relative one inside a function
    # runs importlib's Python code (the package's spec) at every call
    from ginkgodb.engine.geo_near import GeoNear, selection
    sel = selection(state, query, near)
    shown = {k: v for k, v in req.filter.items() if k != sel.path}   # explain: what else filters
    # the near operand (parsed and checked by `selection`) passes every document: a filter of
    # nothing else needs no compiling
    matcher = cached_filter(req.filter, req) if shown else None
    root = GeoNear(state, reader, sel, matcher, shown or None, ctx, req.geo_near, with_metadata)
    return root, QueryPlan(root.name, [IndexPlan(sel.access.meta, None)])


def _may_cover(req: FindRequest, for_write: bool) -> bool:
    """Whether the projection is one an index could cover (plain inclusions): such a query
    takes the full planner, whose exact bounds say whether FETCH can be left out."""
    if for_write or req.return_key or not req.projection:
        return False
    return simple_projection(req.projection) is not None


def _covered(state, reader, plan: QueryPlan, root: Any, req: FindRequest) -> tuple:
    """(the stages, whether covered): an exact single-index FETCH replaced by CoveredKeys when
    the index holds every projected and sorted field (engine/covered.py)."""
    if not isinstance(root, S.Fetch) or root.matcher is not None or not isinstance(root.child, S.IndexScan):
        return root, False
    scan = root.child
    if scan.shown is not None or scan.index.meta is not plan.scans[0].index:
        return root, False   # a view of the index (wildcard): its keys are not the catalog key
    sort = None if _natural(req.sort) else req.sort
    paths = covered_fields(scan.index.meta, req.projection, sort)
    if paths is None or type(scan.index).__name__ != "BtreeAccess":
        return root, False
    return CoveredKeys(state, reader, scan, paths), True


def _keep_keys(root: Any) -> Optional[dict]:
    """Have the stage that reads records remember each one's index entry (returnKey); None for a
    collection scan, whose results have no key."""
    stage = root
    while not isinstance(stage, (S.Fetch, S.IdHack, S.CollScan)):
        stage = stage.child
    if isinstance(stage, S.CollScan):
        return None
    stage.key_sink = {}
    _keep_entry_keys(getattr(stage, "child", None))
    return stage.key_sink


def _keep_entry_keys(stage: Any) -> None:
    if isinstance(stage, S.IndexScan):
        stage.keep_keys = True
    elif isinstance(stage, S.OrScan):
        for scan in stage.scans:
            scan.keep_keys = True
    elif stage is not None and hasattr(stage, "child"):
        _keep_entry_keys(stage.child)


def _check_min_max_hint(req: FindRequest) -> None:
    from ..errors import CommandError, ErrorCode
    hint = req.hint
    if hint in (None, "", {}):
        raise CommandError(ErrorCode.MinMaxNeedsHint,
                           "When using min()/max() a hint of which index to use must be provided")
    if isinstance(hint, dict) and list(hint) == ["$natural"]:
        raise CommandError(ErrorCode.BadValue, "min and max are incompatible with $natural")


def _min_max_scan(state, reader, plan: QueryPlan, filt: dict, req: FindRequest, ctx) -> tuple:
    """The hinted index scanned from the `min` key (inclusive) to the `max` key (exclusive), in
    index order; the filter is applied to every document fetched."""
    from ..errors import CommandError, ErrorCode
    p = plan.scans[0]
    runtime = state.index(p.index.name)
    fields = [f for f, _ in runtime.pattern]
    ends: list[Optional[bytes]] = []
    for given in (req.min_key, req.max_key):
        if given is None:
            ends.append(None)
            continue
        if list(given) != fields:
            raise CommandError(ErrorCode.MinMaxIndexMismatch, "The index chosen is not valid for min/max")
        values = [runtime.collation.transform(v) if runtime.collation is not None else v for v in given.values()]
        ends.append(keycodec.encode_key(values, runtime.directions))
    lo, hi = ends
    if lo is not None and hi is not None and lo >= hi:
        raise CommandError(ErrorCode.MinNotBeforeMax,
                           "The value provided for min() does not come before the value provided for max() "
                           "in the hinted index")
    shown = {f: [f"[{_shown(req.min_key, f, 'MinKey')}, {_shown(req.max_key, f, 'MaxKey')})"] for f in fields}
    scan = S.IndexScan(runtime, reader, [(lo or b"", hi)], shown, p.direction,
                       multikey=bool(p.index.multikey_paths), ctx=ctx)
    matcher = cached_filter(filt, req) if filt else None
    return S.Fetch(state, reader, scan, matcher, filt or None), False


def _shown(bound: Optional[dict], field: str, default: str) -> str:
    if bound is None:
        return default
    from ..bsonutil.shell_format import format_value
    return format_value(bound[field])


def _index_ids(plan: QueryPlan, root: Any) -> tuple[int, ...]:
    """The ids of the indexes a plan scans (cursors re-check they still exist between batches)."""
    ids = [p.index.id for p in plan.scans]
    index = getattr(getattr(root, "child", root), "index", None)
    if index is not None and not ids:
        ids.append(index.meta.id)
    return tuple(ids)


def _collated_key(key, coll):
    return lambda doc: key(coll.transform(doc))


def id_hack_key(filt: dict):
    """The encoded _id of a `{_id: <plain value>}` filter, else None (IDHACK's test)."""
    return id_point_key(filt)


TRIAL_RESULTS = 101   # mongod's trial period: enough results to fill a first batch ...
TRIAL_WORKS = 10_000  # ... or this many keys and documents examined


def _tied(a: QueryPlan, b: QueryPlan) -> bool:
    return (a.kind == b.kind == "IXSCAN" and a.scans[0].score == b.scans[0].score
            and a.provides_sort == b.provides_sort)


def _cached_or_trial(state, reader, cache, shape: tuple, plans: list, filt: dict, req: FindRequest,
                     explain: bool) -> tuple:
    """(plan, rejected plans, its cache entry) for equally ranked plans: the index the plan cache
    holds for the query's shape, else the trial's winner, which is cached (not by explain)."""
    entry = cache.get(shape)
    if entry is not None:
        for p in plans:
            if _tied(plans[0], p) and p.scans[0].index.name == entry.index_name:
                return p, [q for q in plans if q is not p], entry
    winner, rejected, works, scores = _trial(state, reader, plans, filt, req)
    if explain:
        return winner, rejected, None
    key_hash = cache_key_hash(shape, state.indexes)
    entry = PlanCacheEntry(winner.scans[0].index.name, works, dict(filt), req.sort, req.projection, req.collation,
                           explain_plan(winner, state, req), scores, shape_hash(shape), key_hash)
    cache.put(shape, entry)
    return winner, rejected, entry


def _trial(state, reader, plans: list, filt: dict, req: FindRequest) -> tuple:
    """Run the equally ranked plans a little and keep the most productive, as mongod's
    multi-planner does: results per unit of work, the earliest to finish winning ties.
    (winner, the other plans, the winner's work, each tied plan's score)."""
    tied = [p for p in plans if _tied(plans[0], p)]
    scored = []
    for order, plan in enumerate(tied):
        root, _ = _scan(state, reader, plan, filt, req, None)
        results = 0
        finished = True
        for _ in root.rows():
            results += 1
            if results >= TRIAL_RESULTS or root.keys_examined() + root.docs_examined() >= TRIAL_WORKS:
                finished = False
                break
        work = root.keys_examined() + root.docs_examined() + 1
        scored.append((finished, results / work, -order, plan, work))
    scores = [round(1 + productivity + (1e-4 if finished else 0), 4) for finished, productivity, *_ in scored]
    scored.sort(key=lambda t: t[:3], reverse=True)
    winner, works = scored[0][3], scored[0][4]
    return winner, [p for p in plans if p is not winner], works, scores


def bounded_fast(fp: Any) -> bool:
    """Whether the shortcut plan `fp` reads at most one index entry and document per result: an
    exact scan (no residual filter) of an index without array keys, or an equality on a
    single-field unique index (one entry at most, whatever the residual)."""
    if fp.index.multikey_paths:
        return False
    return not fp.residual or (fp.is_equality and fp.index.unique and len(fp.index.key) == 1)


def _fast(state, reader, query: ParsedQuery, req: FindRequest, ctx) -> tuple:
    """(the shortcut plan's stages, the shortcut plan), or (None, None)."""
    fp = fast_plan(state.index_map, query)
    if fp is None:
        return None, None
    return fast_stages(state, reader, fp, state.index(fp.index.name), lambda: query, req, ctx), fp


def fast_stages(state, reader, fp: Any, access: Any, query_of: Any, req: FindRequest, ctx: Any = None) -> Any:
    """The shortcut plan `fp`'s stages: the scan of its ranges on `access` (its index), and FETCH
    with the residual filter. `query_of()` gives the ParsedQuery explain's bounds are shown
    from (made only when explained). A point of a single-field unique index is one probe."""
    ix = fp.index
    scan = S.IndexScan(access, reader, fp.ranges, lambda: access.explain_bounds(query_of()), 1,
                       multikey=bool(ix.multikey_paths), ctx=ctx,
                       at_most_one=fp.is_equality and ix.unique and len(ix.key) == 1)
    residual = cached_filter(fp.residual, req) if fp.residual else None
    return S.Fetch(state, reader, scan, residual, fp.residual)


def _natural(sort: Optional[dict]) -> int:
    if sort and list(sort) == ["$natural"]:
        return 1 if sort["$natural"] >= 0 else -1
    return 0


def _scan(state, reader, plan: QueryPlan, filt: dict, req: FindRequest, ctx) -> tuple:
    """(the scan stage, whether its bounds alone answer the filter)."""
    matcher = cached_filter(filt, req) if filt else None
    if plan.kind == "COLLSCAN":
        return S.CollScan(state, reader, matcher, filt, plan.direction, ctx), not filt
    scans = [_index_scan(state, reader, p, ctx) for p in plan.scans]
    if plan.kind == "OR":
        return S.Fetch(state, reader, S.OrScan(scans), matcher, filt), False
    p = plan.scans[0]
    exact = not filt or (getattr(p.bounds, "exact", False) and _only_index_fields(filt, p.index))
    return S.Fetch(state, reader, scans[0], None if exact else matcher, None if exact else filt), exact


def _only_index_fields(filt: dict, index) -> bool:
    return bool(filt) and all(not k.startswith("$") and k in index.key for k in filt)


def _index_scan(state, reader, p, ctx) -> S.IndexScan:
    runtime = state.index(p.index.name)
    view = p.index is not runtime.meta   # a wildcard index's per-path view: several keys a record
    return S.IndexScan(runtime, reader, p.bounds.key_ranges(), p.bounds.to_explain, p.direction,
                       multikey=view or bool(p.index.multikey_paths), ctx=ctx, shown=p.index if view else None)


class _Eof(S.Stage):
    name = "EOF"

    def rows(self):
        return iter(())


def explain_plan(plan: QueryPlan, state, req: FindRequest) -> dict:
    """A plan's shape without running it (rejectedPlans are described this way)."""
    built = build_shape(plan, state, req)
    return built.explain(False)


def build_shape(plan: QueryPlan, state, req: FindRequest):
    root: Any
    root, _ = _scan(state, None, plan, req.filter or {}, req, None)
    if req.sort and not plan.provides_sort and not _natural(req.sort):
        root = S.SortStage(root, req.sort, None, req.skip + req.limit if req.limit else 0)
    if req.skip:
        root = S.Skip(root, req.skip)
    if req.limit:
        root = S.Limit(root, req.limit)
    return root


def explain_document(built: BuiltPlan, state, req: FindRequest, ns: str, verbosity: str,
                     millis: int, command: dict) -> dict:
    key = shape_key(req.filter, req.sort, req.projection, req.collation)
    shape = shape_hash(key)
    query_planner = {
        "namespace": ns, "indexFilterSet": built.index_filter_set, "parsedQuery": req.filter or {},
        "queryHash": shape, "planCacheShapeHash": shape,
        "planCacheKey": shape if state is None else cache_key_hash(key, state.indexes),
        "maxIndexedOrSolutionsReached": False,
        "maxIndexedAndSolutionsReached": False, "maxScansToExplodeReached": False,
        "winningPlan": built.root.explain(False),
        "rejectedPlans": [explain_plan(p, state, req) for p in built.rejected] if state is not None else [],
    }
    out: dict = {"explainVersion": "1", "queryPlanner": query_planner}
    if verbosity in ("executionStats", "allPlansExecution"):
        out["executionStats"] = {
            "executionSuccess": True, "nReturned": built.root.n_returned,
            "executionTimeMillis": millis, "totalKeysExamined": built.root.keys_examined(),
            "totalDocsExamined": built.root.docs_examined(),
            "executionStages": built.root.explain(True),
        }
        if verbosity == "allPlansExecution":
            out["executionStats"]["allPlansExecution"] = []
    out["command"] = command
    return out
