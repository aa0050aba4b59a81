"""Query-shape statistics for `$queryStats`, in mongod 7.0's shape, kept in memory.

A query's shape is its command with every literal replaced by its type (`{a: 5}` becomes
`{a: {$eq: "?number"}}`, `$in: [1, 2]` becomes `"?array<?number>"`), as mongod's queryShape.
Shapes are built as nested tuples (hashable, so the store is one dict lookup per query) and
turned into documents only when `$queryStats` reads them. Differences from mongod, which
docs/advisor.md lists: regular-expression literals keep their flags (`"?regex/i"`, so the
advisor can tell case-insensitive searches), and `metrics.planSummary` (the last plan) is a
ginkgodb extension. Which queries are recorded follows mongod's `internalQueryStatsRateLimit`
(settings.py): every one (-1, the default here: mongod's is 0, none), none (0), or at most N a
second.
The store keeps the `MAX_SHAPES` shapes seen last. It takes no lock: two threads
recording one shape at the same instant may lose one execution, which advisory statistics
tolerate better than a lock on every query.

Cost per query (bench/results/query-stats-cost.md): the commonest finds (equality on plain
values, no other option) are keyed by their field layout (`QueryStats.keyed_entry`), and the key leads
straight to the shape's metrics (`QueryStats.entry`), so such a find neither rebuilds its shape
nor hashes it.
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import logging
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import floordiv, mul, sub
from typing import Any, Optional

import bson
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.regex import Regex

from .settings import SETTINGS

MAX_SHAPES = 5000

_DOC = "D"     # ("D", ((key, shape), ...))
_ARR = "A"     # ("A", (shape, ...))

_TYPE_NAMES: dict[type, str] = {
    str: "?string", int: "?number", float: "?number", Int64: "?number", Decimal128: "?number",
    bool: "?bool", type(None): "?null", datetime.datetime: "?date", bson.ObjectId: "?objectId",
    bytes: "?binData", bson.Binary: "?binData", bson.Timestamp: "?timestamp", bson.MinKey: "?minKey",
    bson.MaxKey: "?maxKey", bson.Code: "?javascript", bson.DBRef: "?object",
}


def literal(v: Any) -> Any:
    """The placeholder of a literal: its type's name (arrays say what they hold)."""
    name = _TYPE_NAMES.get(type(v))
    if name is not None:
        return name
    if isinstance(v, (list, tuple)):
        if not v:
            return "[]"
        kinds = {literal(x) for x in v}
        inner = kinds.pop() if len(kinds) == 1 else ""
        return f"?array<{inner if isinstance(inner, str) else '?object'}>"
    if isinstance(v, Mapping):
        return "?object"
    if isinstance(v, (Regex, re.Pattern)):
        return _regex(v)
    if isinstance(v, uuid.UUID):
        return "?binData"
    return "?" + type(v).__name__


def _regex(v: Any) -> str:
    flags = v.flags if isinstance(v, Regex) else v.flags
    letters = "i" if isinstance(flags, int) and flags & re.IGNORECASE else ""
    if isinstance(flags, str):
        letters = "".join(sorted(flags))
    return "?regex/" + letters if letters else "?regex"


def filter_shape(filt: Mapping) -> tuple:
    """The shape of a match expression."""
    items = []
    for k, v in filt.items():
        if k in ("$and", "$or", "$nor") and isinstance(v, list):
            items.append((k, (_ARR, tuple(filter_shape(x) if isinstance(x, Mapping) else literal(x) for x in v))))
        elif k.startswith("$"):
            items.append((k, _value_shape(v)))
        elif isinstance(v, Mapping) and v and next(iter(v)).startswith("$"):
            items.append((k, _operators(v)))
        elif isinstance(v, (Regex, re.Pattern)):
            items.append((k, (_DOC, (("$regex", _regex(v)),))))
        else:
            items.append((k, (_DOC, (("$eq", literal(v)),))))
    return (_DOC, tuple(items))


def _operators(ops: Mapping) -> tuple:
    out: list[tuple[str, Any]] = []
    for op, v in ops.items():
        if op in ("$elemMatch", "$not") and isinstance(v, Mapping):
            first = next(iter(v), "")
            out.append((op, _operators(v) if first.startswith("$") else filter_shape(v)))
        elif op == "$regex":
            letters = "".join(sorted(str(ops.get("$options", "")))) if "$options" in ops else ""
            if isinstance(v, (Regex, re.Pattern)):
                out.append((op, _regex(v)))
            else:
                out.append((op, "?regex/" + letters if letters else "?regex"))
        elif op == "$options":
            continue  # folded into $regex's placeholder
        else:
            out.append((op, literal(v)))
    return (_DOC, tuple(out))


def _value_shape(v: Any) -> Any:
    """Aggregation arguments: field paths and names stay, literals become their types."""
    if isinstance(v, Mapping):
        return (_DOC, tuple((k, _value_shape(x)) for k, x in v.items()))
    if isinstance(v, list):
        return (_ARR, tuple(_value_shape(x) for x in v))
    if isinstance(v, str) and v.startswith("$"):
        return v
    return literal(v)


def _kept(v: Any) -> Any:
    """A part kept as given (sort, projection, hint): made hashable."""
    if isinstance(v, Mapping):
        return (_DOC, tuple((k, _kept(x)) for k, x in v.items()))
    if isinstance(v, list):
        return (_ARR, tuple(_kept(x) for x in v))
    return v if isinstance(v, (str, int, float, bool, type(None))) else literal(v)


def stage_shape(stage: Mapping) -> tuple:
    name, spec = next(iter(stage.items()))
    if name == "$match" and isinstance(spec, Mapping):
        return (_DOC, ((name, filter_shape(spec)),))
    if name in ("$limit", "$skip", "$sample"):
        return (_DOC, ((name, literal(spec) if name != "$sample" else _value_shape(spec)),))
    if name in ("$sort", "$project", "$unset"):
        return (_DOC, ((name, _kept(spec)),))
    return (_DOC, ((name, _value_shape(spec)),))


_PLAIN_TYPES = frozenset(_TYPE_NAMES)

#: a find key's entry for a document operand (`_operand_key`): an embedded document, whatever
#: it holds (its shape is "?object"), or operators with their operands' types after this mark
_EMBEDDED = "?object"
_OPERATORS = "$"
#: operators whose shape is not their operand's type: built through the shape
_SHAPED_OPERATORS = frozenset({"$elemMatch", "$not", "$regex", "$options"})
_OPERAND_TYPES = _PLAIN_TYPES | {dict}     # an operator's dict operand is "?object"


def _operand_key(value: dict) -> Any:
    """What a filter field's document operand puts in a find's key in place of its type: the
    operators and their operands' types (`{$near: {...}}`, `{$gt: 1, $lt: 5}`), which fix its
    shape when `keyable` accepts them, or `_EMBEDDED` for an embedded document."""
    for first in value:
        if first.startswith("$"):
            return (_OPERATORS, *value, *map(type, value.values()))
        break
    return _EMBEDDED


def _operand_keyable(kind: Any) -> bool:
    """Whether a document operand's key entry (`_operand_key`) fixes its shape."""
    if kind is _EMBEDDED:
        return True
    k = (len(kind) - 1) // 2
    ops, types = kind[1:1 + k], kind[1 + k:]
    return _SHAPED_OPERATORS.isdisjoint(ops) and _OPERAND_TYPES.issuperset(types)


#: the find fields a find key may be taken with: none of them is in the shape (limit: whether
#: there is one), so a find naming only these has its shape fixed by its filter's layout
#: (`shardVersion`: every find a router sends a shard of a sharded collection)
_KEYED_FIND_FIELDS = frozenset({
    "find", "filter", "limit", "batchSize", "singleBatch", "noCursorTimeout", "allowDiskUse", "comment",
    "maxTimeMS", "readConcern", "lsid", "txnNumber", "$db", "$clusterTime", "$readPreference", "apiVersion",
    "apiStrict", "apiDeprecationErrors", "shardVersion"})


def find_shape(db: str, coll: Optional[str], filt: Mapping, sort: Any, projection: Any, skip: int, limit: int,
               hint: Any, collation: Any) -> tuple:
    """The shape of a find."""
    parts: list = [("cmdNs", (_DOC, (("db", db), ("coll", coll)))), ("command", "find"),
                   ("filter", filter_shape(filt) if filt else (_DOC, ()))]
    if sort:
        parts.append(("sort", _kept(sort)))
    if projection:
        parts.append(("projection", _kept(projection)))
    if skip:
        parts.append(("skip", "?number"))
    if limit:
        parts.append(("limit", "?number"))
    if hint:
        parts.append(("hint", _kept(hint)))
    if collation:
        parts.append(("collation", _kept(collation)))
    return (_DOC, tuple(parts))


def aggregate_shape(db: str, coll: Optional[str], pipeline: list) -> tuple:
    ns = (("db", db), ("coll", coll)) if coll else (("db", db),)
    return (_DOC, (("cmdNs", (_DOC, ns)), ("command", "aggregate"),
                   ("pipeline", (_ARR, tuple(stage_shape(s) for s in pipeline if isinstance(s, Mapping))))))


def from_document(doc: Any) -> Any:
    """The tuple form of a shape document (to_document's inverse)."""
    if isinstance(doc, Mapping):
        return (_DOC, tuple((k, from_document(v)) for k, v in doc.items()))
    if isinstance(doc, list):
        return (_ARR, tuple(from_document(v) for v in doc))
    return doc


def to_document(shape: Any) -> Any:
    if isinstance(shape, tuple) and len(shape) == 2 and shape[0] == _DOC:
        return {k: to_document(v) for k, v in shape[1]}
    if isinstance(shape, tuple) and len(shape) == 2 and shape[0] == _ARR:
        return [to_document(v) for v in shape[1]]
    return shape


def summarized(values: Sequence[int]) -> tuple[int, int, int, int]:
    """(sum, sum of squares, max, min) of many executions' values, at C speed; a column of one
    value (a point read's counts) is multiplied out."""
    top, low = max(values), min(values)
    if top == low:
        return top * len(values), top * top * len(values), top, low
    return sum(values), sum(map(mul, values, values)), top, low


class _Sum:
    """mongod's aggregated metric: sum, max, min, sumOfSquares."""

    __slots__ = ("sum", "max", "min", "squares")

    def __init__(self) -> None:
        self.sum = self.max = self.squares = 0
        self.min = -1

    def add(self, v: int) -> None:
        self.sum += v
        self.squares += v * v
        if v > self.max:
            self.max = v
        if self.min < 0 or v < self.min:
            self.min = v

    def fold(self, summary: tuple[int, int, int, int]) -> None:
        """Many executions at once (ShapeMetrics.fold): their `summarized` values."""
        total, squares, top, low = summary
        self.sum += total
        self.squares += squares
        if top > self.max:
            self.max = top
        if self.min < 0 or low < self.min:
            self.min = low

    def grow(self, v: int) -> None:
        """A getMore's share of the same execution: the sums grow, max/min stay per execution."""
        self.sum += v

    def document(self) -> dict:
        return {"sum": Int64(self.sum), "max": Int64(self.max), "min": Int64(max(self.min, 0)),
                "sumOfSquares": Decimal128(str(self.squares))}

    def state(self) -> list:
        return [Int64(self.sum), Int64(self.max), Int64(self.min), str(self.squares)]

    def restore(self, state: list) -> None:
        self.sum, self.max, self.min, self.squares = int(state[0]), int(state[1]), int(state[2]), int(state[3])


class ShapeMetrics:
    __slots__ = ("shape", "_exec_count", "total_micros", "first_response_micros", "docs_returned",
                 "keys_examined", "docs_examined", "last_micros", "first_seen", "latest_seen",
                 "plan", "plan_source", "_summary", "pending", "top_cell")

    def __init__(self, shape: tuple) -> None:
        self.shape = shape
        #: the `top` queries cell ([micros, count]) of the shape's namespace: executions reach
        #: `top` when they are folded, so a recorded find touches one structure
        self.top_cell: Optional[list[int]] = None
        self._exec_count = 0
        #: executions not yet added to the metrics: ended, returned, keys, docs, started each,
        #: flat (PENDING_WIDTH ints per execution; ended and started time.perf_counter_ns());
        #: folded in bulk (FOLD_AT at a time, or when read), so an execution costs one extend
        self.pending: list[int] = []
        self.total_micros, self.first_response_micros = _Sum(), _Sum()
        self.docs_returned, self.keys_examined, self.docs_examined = _Sum(), _Sum(), _Sum()
        self.last_micros = 0
        self.first_seen = 0.0    # time.time() of the first and latest execution
        self.latest_seen = 0.0
        self.plan: Any = None                 # the last execution's QueryPlan
        #: the last execution's plan counters (a BuiltPlan, or a PlanStats holding one), whose
        #: QueryPlan becomes `plan` at the next fold: an execution stores one reference
        self.plan_source: Any = None
        self._summary: Optional[str] = None   # or its summary, as a data directory kept it

    @property
    def exec_count(self) -> int:
        return self._exec_count + len(self.pending) // PENDING_WIDTH

    @exec_count.setter
    def exec_count(self, n: int) -> None:
        self._exec_count = n - len(self.pending) // PENDING_WIDTH

    def fold(self) -> None:
        """Add the pending executions to the metrics."""
        source = self.plan_source
        if source is not None:
            self.plan_source = None
            chosen = getattr(source, "plan", None)     # a BuiltPlan's QueryPlan
            if chosen is None:
                built = getattr(source, "built", None)   # or what holds one
                chosen = built.plan if built is not None else None
            if chosen is not None:
                self.plan = chosen
        pending = self.pending
        if not pending:
            return
        self.pending = []    # swapped, not cleared: a thread appending meanwhile is not counted twice
        ended, returned, keys, docs, started = (pending[i::PENDING_WIDTH] for i in range(PENDING_WIDTH))
        micros = list(map(floordiv, map(sub, ended, started), repeat(1000)))
        self._exec_count += len(micros)
        cell = self.top_cell
        if cell is not None:
            cell[0] += sum(micros)
            cell[1] += len(micros)
        self.last_micros = micros[-1]
        self.latest_seen = max(self.latest_seen, wall_clock(started[-1]) + micros[-1] / 1e6)
        times = summarized(micros)   # a first batch's time is both its total and first response time
        self.total_micros.fold(times)
        self.first_response_micros.fold(times)
        # the columns are often equal (a point read returns, examines and fetches one): summed once
        counts = summarized(returned)
        self.docs_returned.fold(counts)
        if keys != returned:
            counts = summarized(keys)
        self.keys_examined.fold(counts)
        if docs != keys:
            counts = summarized(docs)
        self.docs_examined.fold(counts)

    @property
    def plan_summary(self) -> Optional[str]:
        if self.plan_source is not None:
            self.fold()
        if self.plan is not None:
            from .plan_builder import plan_summary
            return plan_summary(self.plan)
        return self._summary

    def document(self, db: str) -> dict:
        self.fold()
        key = {"queryShape": to_document(self.shape), "collectionType": "collection"}
        raw = bson.encode(key)
        return {"key": key,
                "keyHash": base64.b64encode(hashlib.sha256(raw).digest()).decode(),
                "queryShapeHash": hashlib.sha256(bson.encode(key["queryShape"])).hexdigest().upper(),
                "metrics": {
                    "lastExecutionMicros": Int64(self.last_micros), "execCount": Int64(self.exec_count),
                    "totalExecMicros": self.total_micros.document(),
                    "firstResponseExecMicros": self.first_response_micros.document(),
                    "docsReturned": self.docs_returned.document(),
                    "keysExamined": self.keys_examined.document(),
                    "docsExamined": self.docs_examined.document(),
                    "firstSeenTimestamp": _utc(self.first_seen), "latestSeenTimestamp": _utc(self.latest_seen),
                    **({"planSummary": self.plan_summary} if self.plan_summary else {})},
                "asOf": bson.Timestamp(int(datetime.datetime.now(datetime.UTC).timestamp()), 0)}


#: what `top` counts per namespace, in its order
TOP_KINDS = ("queries", "getmore", "insert", "update", "remove", "commands")
#: sampled queries kept per namespace for analyzeShardKey (mongod keeps them in config.sampledQueries)
MAX_SAMPLED = 10_000


#: executions a shape keeps pending before adding them to its metrics
FOLD_AT = 256
#: a pending execution's values, kept flat (ShapeMetrics.pending: a list of ints holds no
#: container the garbage collector would visit or count)
PENDING_WIDTH = 5
_FOLD_LENGTH = FOLD_AT * PENDING_WIDTH

_SUMS = ("total_micros", "first_response_micros", "docs_returned", "keys_examined", "docs_examined")


log = logging.getLogger("ginkgodb.query_stats")
_now = time.perf_counter_ns   # note_query's clock, one global lookup
#: time.time() - time.perf_counter_ns() / 1e9 when the module loaded
_WALL_OFFSET = time.time() - time.perf_counter_ns() / 1e9


def wall_clock(perf_ns: int) -> float:
    """The time.time() of a time.perf_counter_ns() reading (to the clock's drift since start)."""
    return _WALL_OFFSET + perf_ns / 1e9


def _utc(t: float) -> datetime.datetime:
    """mongod's dates have millisecond precision."""
    d = datetime.datetime.fromtimestamp(t, datetime.UTC).replace(tzinfo=None)
    return d.replace(microsecond=d.microsecond // 1000 * 1000)


def _find_key(ns: str, layout: Any, filt: Any) -> tuple:
    """A find's key (QueryStats.keyed_entry): the filter's field names, then per field its
    value's type, or a document operand's `_operand_key`."""
    kinds = tuple(map(type, filt.values()))
    if dict in kinds:
        kinds = tuple(kind if kind is not dict else _operand_key(value)
                      for kind, value in zip(kinds, filt.values()))
    return (ns, layout, *filt, *kinds)


class QueryStats:
    """Metrics per shape, most recently used last (the oldest are evicted past MAX_SHAPES, and the keys then forgotten);
    operation counts and times per namespace (`top`); the query analyzers' configurations and
    the queries they sampled (`configureQueryAnalyzer`, `analyzeShardKey`)."""

    def __init__(self) -> None:
        self.shapes: dict[tuple, ShapeMetrics] = {}
        #: a find's key (keyed_entry) -> the metrics of its shape
        self.keyed: dict[tuple, ShapeMetrics] = {}
        #: False: nothing is recorded (`MongoClient(path, queryStats=False)`)
        self.enabled = True
        self._second = 0      # the rate limit's current second and the queries admitted in it
        self._admitted = 0
        self.top: dict[str, list[list[int]]] = {}        # ns -> per TOP_KINDS [micros, count]
        self.analyzers: dict[str, dict] = {}             # ns -> {mode, samplesPerSecond}
        #: ns -> [(command, filter, update or None, multi)]
        self.sampled: dict[str, list[tuple[str, dict, Any, bool]]] = {}
        self._window: dict[str, list[float]] = {}        # ns -> [second, samples taken in it]

    def dump(self) -> bytes:
        """The shapes' metrics and `top` as BSON, for the engine to keep at close (so `ginkgodb
        advise --dbpath` sees the workload of the last run); the newest shapes first if too large."""
        entries = []
        for e in reversed(list(self.shapes.values())):
            e.fold()
            entries.append({"shape": to_document(e.shape), "n": Int64(e.exec_count), "last": Int64(e.last_micros),
                            "first": e.first_seen, "latest": e.latest_seen, "plan": e.plan_summary,
                            "sums": [getattr(e, name).state() for name in _SUMS]})
        top = {ns: [[Int64(c[0]), Int64(c[1])] for c in row] for ns, row in self.top.items()}
        while True:
            raw = bson.encode({"shapes": entries, "top": top})
            if len(raw) < 8 * 1024 * 1024 or not entries:
                return raw
            del entries[len(entries) // 2:]

    def load(self, raw: Optional[bytes]) -> None:
        if not raw:
            return
        try:
            doc = bson.decode(raw)
            for item in reversed(doc.get("shapes", [])):
                e = ShapeMetrics(from_document(item["shape"]))
                e.exec_count, e.last_micros = int(item["n"]), int(item["last"])
                e.first_seen, e.latest_seen = float(item["first"]), float(item["latest"])
                e._summary = item["plan"]
                for name, state in zip(_SUMS, item["sums"]):
                    getattr(e, name).restore(state)
                self.shapes[e.shape] = e
            for ns, row in doc.get("top", {}).items():
                self.top[ns] = [[int(c[0]), int(c[1])] for c in row]
        except Exception:  # statistics from another format: start afresh
            self.shapes.clear()
            self.top.clear()

    def top_row(self, ns: str) -> list[list[int]]:
        """`top`'s cells of a namespace ([micros, count] per TOP_KINDS), created if new."""
        row = self.top.get(ns)
        if row is None:
            row = self.top[ns] = [[0, 0] for _ in TOP_KINDS]
        return row

    def count_op(self, ns: str, kind: int, micros: int) -> None:
        row = self.top.get(ns)
        cell = (row if row is not None else self.top_row(ns))[kind]
        cell[0] += micros
        cell[1] += 1

    def fold_all(self) -> None:
        """Every shape's pending executions into its metrics and `top` (before either is read)."""
        for entry in list(self.shapes.values()):
            entry.fold()

    def sample(self, ns: str, command: str, filt: Any, update: Any = None, multi: bool = False) -> None:
        """A query on a namespace an analyzer samples, at most `samplesPerSecond` a second
        (callers test `self.analyzers` first)."""
        config = self.analyzers.get(ns)
        if config is None or not isinstance(filt, Mapping):
            return
        now = int(time.monotonic())
        window = self._window.setdefault(ns, [now, 0])
        if window[0] != now:
            window[0], window[1] = now, 0
        if window[1] >= config["samplesPerSecond"]:
            return
        window[1] += 1
        kept = self.sampled.setdefault(ns, [])
        if len(kept) >= MAX_SAMPLED:
            kept.pop(0)
        kept.append((command, dict(filt), update, multi))

    def admit(self) -> bool:
        """Whether the rate limit lets this query be recorded (callers skip the call when
        SETTINGS.query_stats_rate_limit is -1, the default)."""
        limit = SETTINGS.query_stats_rate_limit
        if limit < 0:
            return True
        if limit == 0:
            return False
        now = int(time.monotonic())
        if now != self._second:
            self._second, self._admitted = now, 0
        if self._admitted >= limit:
            return False
        self._admitted += 1
        return True

    def note_query(self, cursor: Any, shape: Any, started: int, filt: Any, layout: Any) -> None:
        """A find or aggregate ran its first batch (`started`: time.perf_counter_ns() at its
        start; `filt`: its filter, a dict; `layout`: a find's prepared parse (commands/declare.py's
        Layout, hashed by identity), or None for an aggregate). A find's key (keyed_entry's, built
        here inline) leads to its shape's metrics without calling `shape`. Straight-line on
        purpose: every find runs it. It never fails the query it describes (as the profiler)."""
        try:
            ended = _now()
            ns = cursor.ns
            if self.analyzers:
                self.sample(ns, "find" if layout is not None else "aggregate", filt if filt is not None else {})
            if SETTINGS.query_stats_rate_limit >= 0 and not self.admit():
                self.count_op(ns, 0, (ended - started) // 1000)   # `top` counts every query (TOP_KINDS[0])
                return
            if layout is None:
                entry = self.entry(None, shape, ns)
            else:
                if len(filt) == 1:   # the commonest find: one field (the same key, built without a list)
                    [(name, value)] = filt.items()
                    kind = type(value)
                    key = (ns, layout, name, kind if kind is not dict else _operand_key(value))
                else:
                    key = _find_key(ns, layout, filt)
                found = self.keyed.get(key)
                entry = found if found is not None else self.entry(key, shape, ns)
            plan = cursor.stats
            keys, docs = plan.examined() if plan is not None else (0, 0)
            pending = entry.pending      # ShapeMetrics.add, inline
            pending.extend((ended, cursor.n_returned, keys, docs, started))   # n_returned: batch one's
            entry.plan_source = plan     # its chosen plan is read from it when the executions are folded
            if len(pending) >= _FOLD_LENGTH:
                entry.fold()
            if not cursor.exhausted:     # open: its getMores add to this execution
                cursor.query_entry = (entry, keys, docs)
        except Exception:
            log.exception("cannot record the statistics of an operation")

    def keyed_entry(self, ns: str, layout: Any, filt: Any) -> tuple[Optional[ShapeMetrics], tuple]:
        """(the metrics, the key) of a find: the metrics its key leads to without building its
        shape (None when the key is new, or is not one `keyable` lets lead anywhere; both then go
        through `entry`). The key: the namespace, the command's prepared parse (its layout: field
        names and value types; `layout.names` the names), the filter's (`filt`, as parsed, a dict)
        field names and value types. Only keys that pass `keyable` are kept, so a key found needs
        no check: every repeated find runs this, one tuple and one lookup."""
        key = _find_key(ns, layout, filt)   # as note_query's
        return self.keyed.get(key), key

    @staticmethod
    def keyable(key: tuple) -> bool:
        """Whether a find's key (keyed_entry) determines its shape: the command names no field of
        the shape but its filter and limit, and the filter is equality on plain values. A string
        under an operator key stays in the shape when it is a field path (`{$expr: "$a"}`):
        such filters take the shape's path."""
        k = (len(key) - 2) // 2
        names, types = key[2:2 + k], key[2 + k:]
        if not _KEYED_FIND_FIELDS.issuperset(key[1].names):
            return False
        if not _PLAIN_TYPES.issuperset(types):
            # document operands: under a field name, not an operator's (whose shape keeps paths)
            documents = [(n, t) for n, t in zip(names, types) if t not in _PLAIN_TYPES]
            if not all(type(t) is not type and not n.startswith("$") and _operand_keyable(t)
                       for n, t in documents):
                return False
        return str not in types or "\0$" not in "\0" + "\0".join(names)   # field names hold no NUL

    def entry(self, key: Optional[tuple], shape: Any, ns: str) -> ShapeMetrics:
        """The metrics of a query's shape on `ns`, whose executions count in `top` when folded:
        built by `shape()` and looked up, and kept under the find's key (keyed_entry) when the key
        determines the shape."""
        entry = self.shaped(shape())
        if entry.top_cell is None:
            entry.top_cell = self.top_row(ns)[0]     # TOP_KINDS[0]: queries
        if key is not None and self.keyable(key):
            keyed = self.keyed
            if len(keyed) >= MAX_SHAPES:
                keyed.clear()
            keyed[key] = entry
        return entry

    def shaped(self, shape: tuple) -> ShapeMetrics:
        """The metrics of a shape, created (evicting the oldest by first execution) if new."""
        shapes = self.shapes
        entry = shapes.get(shape)
        if entry is None:
            if len(shapes) >= MAX_SHAPES:
                oldest = next(iter(shapes), None)
                if oldest is not None:
                    gone = shapes.pop(oldest)
                    self.keyed.clear()   # keys lead only to kept shapes (found again through shape())
                    gone.fold()      # its executions still count in `top`
            entry = shapes[shape] = ShapeMetrics(shape)
            entry.first_seen = time.time()
        return entry

    def more(self, entry: ShapeMetrics, micros: int, returned: int, keys: int, docs: int) -> None:
        """A getMore of an execution already counted."""
        entry.total_micros.grow(micros)
        entry.docs_returned.grow(returned)
        entry.keys_examined.grow(keys)
        entry.docs_examined.grow(docs)


def query_stats_stage(engine: Any, db: str, spec: Any) -> Any:
    """`{$queryStats: {}}` (admin, `aggregate: 1`): one document per recorded shape."""
    from ..errors import CommandError, ErrorCode
    if db != "admin":
        raise CommandError(ErrorCode.InvalidNamespace,
                           "$queryStats must be run against the 'admin' database with {aggregate: 1}")
    if not isinstance(spec, Mapping):
        raise CommandError(ErrorCode.FailedToParse,
                           f"$queryStats stage expects a document as argument, got {type(spec).__name__}")
    for field in spec:
        if field != "transformIdentifiers":
            raise CommandError(ErrorCode.IDLUnknownField,
                               f"BSON field '$queryStats.{field}' is an unknown field.")
    if spec.get("transformIdentifiers"):
        raise CommandError(ErrorCode.NotImplemented,
                           "$queryStats with transformIdentifiers is not supported by ginkgodb")
    stats = getattr(engine, "query_stats", None)
    entries = list(stats.shapes.values()) if stats is not None else []
    return iter([e.document(db) for e in entries])
