"""Plan stages: small iterators composed into a query plan, each able to explain itself.

A row is `(rid, raw, doc)`: the record id, the stored BSON, and the decoded document or None
when nothing has needed it yet (documents stay raw until a filter, sort or projection asks).
"""
from __future__ import annotations

import heapq
import struct
from collections.abc import Callable, Iterator
from typing import Any, Optional

import bson
from bson.int64 import Int64

from ..errors import CommandError, ErrorCode
from ..query.external_sort import NO_SPILL, SortBuffer, Spill
from ..query.knobs import KNOBS
from ..query.operation import checked
from ..query.operation import current as current_operation
from ..storage.kv import prefix_end
from .bytes_test_choice import CALIBRATION, choice_of
from .record_format import document as _stored_document

Row = tuple  # (rid: int, raw: bytes, doc: dict | None)
_decode = bson.decode
_INT32 = struct.Struct("<i")
_INT64 = struct.Struct("<q")


def interrupt_check(ctx: Any) -> None:
    """Stop a long scan when its operation was killed or ran out of time: the operation running
    now (a cursor's getMore, later) and the one the plan was built for."""
    op = current_operation()
    if op is not None:
        op.check_interrupt()
    if ctx is not None and ctx is not op:
        ctx.check_interrupt()


class Stage:
    name = "STAGE"

    def __init__(self) -> None:
        self.n_returned = 0
        self.works = 0

    def rows(self) -> Iterator[Row]:
        raise NotImplementedError

    def explain(self, stats: bool) -> dict:
        out: dict[str, Any] = {"stage": self.name}
        out.update(self.describe())
        if stats:
            out["nReturned"] = self.n_returned
            out["works"] = self.works
            out.update(self.stat_fields())
        child = self.child_explain(stats)
        if child is not None:
            out.update(child)
        return out

    def describe(self) -> dict:
        return {}

    def stat_fields(self) -> dict:
        return {}

    def child_explain(self, stats: bool) -> Optional[dict]:
        return None

    def keys_examined(self) -> int:
        return 0

    def docs_examined(self) -> int:
        return 0

    def counts(self) -> tuple[int, int]:
        """(keys examined, docs examined): both in one walk of the stages (every find's
        statistics read both)."""
        return self.keys_examined(), self.docs_examined()


#: a scan stops running the filter's bytes test when more than this many of the last 1,024
#: documents it tested passed (a test costs up to about half a decode: a number's, which looks
#: for several element patterns; most decoded anyway, it no longer pays)
PREFILTER_KEPT_BELOW = 768
#: a scan builds the test once it has read this many documents: compiling a range's expression
#: costs up to a millisecond, more than a short scan behind an index saves
PREFILTER_AFTER = 64
#: ... and keeps, after testing CALIBRATION documents with every group, the groups that pay
PREFILTER_CHOSEN = PREFILTER_AFTER + CALIBRATION


class CollScan(Stage):
    name = "COLLSCAN"

    def __init__(self, state, reader, matcher, filter_spec: dict, direction: int = 1, ctx=None) -> None:
        super().__init__()
        self.state, self.reader, self.matcher = state, reader, getattr(matcher, "match", matcher)
        #: what gives the filter's test on the stored bytes, run before decoding
        #: (query/match/raw_prefilter.py): the compiled filter, asked after PREFILTER_AFTER documents
        self.compiled = matcher
        self.filter_spec, self.direction, self.ctx = filter_spec, direction, ctx
        self.examined = 0

    def rows(self) -> Iterator[Row]:
        prefix = self.state.record_prefix
        matcher, compiled = self.matcher, self.compiled
        prefilter = choice = None
        after, chosen_at, kept_below = PREFILTER_AFTER, PREFILTER_CHOSEN, PREFILTER_KEPT_BELOW   # locals: per document
        rid_of = self.state.rid_of_record_key
        ctx = self.ctx
        stored = _stored_document
        n = passed = 0
        for key, value in self.reader.scan(prefix, prefix_end(prefix), self.direction < 0):
            raw = stored(value)
            n += 1
            if n == after:
                prefilter = choice = choice_of(compiled)   # every group, counted, for CALIBRATION documents
            elif n == chosen_at and choice is not None:
                prefilter = choice.chosen()
            if not n & 1023:
                interrupt_check(ctx)
                if passed > kept_below:
                    prefilter = None   # it passed most of the last 1024: it costs more than it saves
                passed = 0
            if matcher is None:
                self.n_returned += 1
                yield rid_of(key), raw, None
                continue
            if prefilter is not None:
                if not prefilter(raw):
                    self.examined = n
                    continue   # its bytes rule a match out: not decoded
                passed += 1
            doc = _decode(raw)
            if matcher(doc):
                self.n_returned += 1
                yield rid_of(key), raw, doc
            self.examined = n
        self.examined = n
        self.works = n + 1

    def describe(self) -> dict:
        out: dict[str, Any] = {}
        if self.filter_spec:
            out["filter"] = self.filter_spec
        out["direction"] = "forward" if self.direction > 0 else "backward"
        return out

    def stat_fields(self) -> dict:
        return {"docsExamined": self.docs_examined()}

    def docs_examined(self) -> int:
        # without a filter every record examined is returned (the loop counts only at the end)
        return self.n_returned if self.matcher is None else self.examined


class IndexScan(Stage):
    """Yields record ids of entries inside the byte ranges, de-duplicated when multikey."""

    name = "IXSCAN"

    def __init__(self, index, reader, ranges: list, bounds_explain: Any, direction: int = 1,
                 multikey: bool = False, ctx=None, shown: Any = None, at_most_one: bool = False) -> None:
        """`bounds_explain` is explain's indexBounds, or a callable computing them on demand;
        `shown` the catalog entry explain describes (a wildcard index's per-path view), when it
        is not the index's own; `at_most_one`: `ranges` is one key of a unique index, which one
        entry at most holds (read by one probe, as IDHACK reads the `_id` index)."""
        self.n_returned = self.works = 0   # Stage.__init__, inline: every query builds these
        self.shown = shown
        self.index, self.reader, self.ranges = index, reader, ranges
        self.bounds_explain, self.direction, self.multikey, self.ctx = bounds_explain, direction, multikey, ctx
        self.examined = 0
        self.dups = 0
        self.keep_keys = False   # returnKey: remember the entry each record id came from
        self._entry: Optional[bytes] = None
        # a clustered collection's records are its _id index's entries: FETCH takes the value read
        self.record_value: Optional[bytes] = None
        self.yields_records = getattr(index, "kind", "") == "clustered"
        self.at_most_one = at_most_one

    def rids(self) -> Iterator[int]:
        if not (self.keep_keys or self.yields_records):
            if self.at_most_one:
                return self._one_rid()
            if not self.multikey:
                return self._distinct_rids()
        return self._rids()

    def _one_rid(self) -> Iterator[int]:
        """_distinct_rids of a scan that one entry at most answers: one probe, the same counts."""
        prefix = self.index.prefix
        for lo, hi in self.ranges:
            entry = self.reader.first(prefix + lo, prefix + hi if hi is not None else prefix_end(prefix))
            if entry is not None:
                self.examined += 1
                self.n_returned += 1
                yield self.index.rid_of_entry(entry)
        self.works = self.examined + 1

    def _distinct_rids(self) -> Iterator[int]:
        """_rids for the commonest scan: one entry a record, nothing kept but the record id
        (the same counts, without testing per entry what cannot apply)."""
        prefix = self.index.prefix
        rid_from = self.index.rid_of_entry
        reverse = self.direction < 0
        ranges = list(reversed(self.ranges)) if reverse else self.ranges
        scan, first, ctx = self.reader.scan, self.reader.first, self.ctx
        for lo, hi in ranges:
            hi_key = prefix + hi if hi is not None else prefix_end(prefix)
            start = prefix + lo
            if not reverse:
                # the first entry alone, by one probe: a consumer that needs one row (update_one,
                # find_one, a limit of 1) stops here instead of reading a chunk of entries
                entry = first(start, hi_key)
                if entry is None:
                    continue
                self.examined += 1
                self.n_returned += 1
                yield rid_from(entry)
                start = entry + b"\x00"   # the smallest key after it
            for key, _ in scan(start, hi_key, reverse):
                self.examined += 1
                if not self.examined & 1023:
                    interrupt_check(ctx)
                self.n_returned += 1
                yield rid_from(key)
        self.works = self.examined + 1

    def _rids(self) -> Iterator[int]:
        prefix = self.index.prefix
        rid_from = self.index.rid_of_entry
        ranges = self.ranges if self.direction > 0 else list(reversed(self.ranges))
        seen: Optional[set] = set() if self.multikey else None
        keep, records = self.keep_keys, self.yields_records
        for lo, hi in ranges:
            hi_key = prefix + hi if hi is not None else prefix_end(prefix)
            for key, value in self.reader.scan(prefix + lo, hi_key, self.direction < 0):
                self.examined += 1
                if not self.examined & 1023:
                    interrupt_check(self.ctx)
                rid = rid_from(key)
                if seen is not None:
                    if rid in seen:
                        self.dups += 1
                        continue
                    seen.add(rid)
                self.n_returned += 1
                if keep:
                    self._entry = self.index.key_of_entry(key)
                if records:
                    self.record_value = value
                yield rid
        self.works = self.examined + 1

    def current_key(self) -> tuple:
        """(the index, the encoded key of the entry the last record id came from)."""
        return self.index, self._entry

    def describe(self) -> dict:
        meta = self.shown if self.shown is not None else self.index.meta
        return {"keyPattern": dict(meta.key), "indexName": meta.name,
                "isMultiKey": bool(meta.multikey_paths),
                "multiKeyPaths": {f: _multikey_components(f, meta.multikey_paths) for f in meta.key},
                "isUnique": meta.unique, "isSparse": meta.sparse, "isPartial": meta.partial is not None,
                "indexVersion": 2, "direction": "forward" if self.direction > 0 else "backward",
                "indexBounds": self.bounds_explain() if callable(self.bounds_explain) else self.bounds_explain}

    def stat_fields(self) -> dict:
        return {"keysExamined": self.examined, "dupsTested": self.examined if self.multikey else 0,
                "dupsDropped": self.dups}

    def keys_examined(self) -> int:
        return self.examined


def _multikey_components(field: str, multikey_paths: Any) -> list[str]:
    """explain's multiKeyPaths of one key field: its array-valued prefixes."""
    return sorted(m for m in multikey_paths if m == field or field.startswith(m + "."))


class OrScan(Stage):
    """Union of index scans, de-duplicated by record id."""

    name = "OR"

    def __init__(self, scans: list[IndexScan]) -> None:
        super().__init__()
        self.scans = scans
        self.dups = 0
        self._active: Optional[IndexScan] = None

    def current_key(self) -> tuple:
        assert self._active is not None
        return self._active.current_key()

    def rids(self) -> Iterator[int]:
        seen: set = set()
        for scan in self.scans:
            self._active = scan
            for rid in scan.rids():
                if rid in seen:
                    self.dups += 1
                    continue
                seen.add(rid)
                self.n_returned += 1
                yield rid

    def child_explain(self, stats: bool) -> dict:
        return {"inputStages": [s.explain(stats) for s in self.scans]}

    def stat_fields(self) -> dict:
        return {"dupsTested": self.n_returned + self.dups, "dupsDropped": self.dups}

    def keys_examined(self) -> int:
        return sum(s.examined for s in self.scans)


def probe_id(state, reader, key: bytes) -> Optional[tuple[Any, Optional[bytes]]]:
    """The one probe of the `_id` index an IDHACK is: None when no entry holds `key`, else
    (record id, the record's BSON, or None when the record is gone). IdHack's rows and
    reads.find_point, which answers a point find without stages, both read through it."""
    ix = state.id_index
    lo = ix.prefix + key
    entry = reader.first(lo, prefix_end(lo))
    if entry is None:
        return None
    rid = ix.rid_of_entry(entry)
    value = reader.get(state.record_key(rid))
    return rid, (_stored_document(value) if value is not None else None)


class IdHack(Stage):
    """mongod's IDHACK: `{_id: value}` answered by one probe of the _id index, no planning."""

    name = "IDHACK"

    def __init__(self, state, reader, key: bytes) -> None:
        self.n_returned = self.works = 0   # Stage.__init__, inline: every query builds these
        self.state, self.reader, self.key = state, reader, key
        self.examined = 0
        self.key_sink: Optional[dict] = None   # returnKey: record id -> (index, encoded key)
        self.query_filter: Optional[dict] = None   # the filter (a clustered collection shows it)

    def explain(self, stats: bool) -> dict:
        if self.state.clustered:   # mongod probes a clustered collection's records by _id
            from .clustered_explain import clustered_scan_explain
            return clustered_scan_explain(self.query_filter, 1, stats, self.n_returned, self.n_returned + 1,
                                          self.n_returned)
        return super().explain(stats)

    def rows(self) -> Iterator[Row]:
        found = probe_id(self.state, self.reader, self.key)
        if found is None:
            return
        self.examined = 1
        rid, raw = found
        if raw is not None:
            self.n_returned = 1
            if self.key_sink is not None:
                self.key_sink[rid] = (self.state.id_index, self.key)
            yield rid, raw, None

    def stat_fields(self) -> dict:
        return {"keysExamined": self.examined, "docsExamined": self.n_returned}

    def keys_examined(self) -> int:
        return self.examined

    def docs_examined(self) -> int:
        return self.n_returned

    def counts(self) -> tuple[int, int]:
        return self.examined, self.n_returned


class Fetch(Stage):
    name = "FETCH"

    def __init__(self, state, reader, child, matcher, filter_spec: Optional[dict]) -> None:
        self.n_returned = self.works = 0   # Stage.__init__, inline: every query builds these
        self.state, self.reader, self.child = state, reader, child
        # None has no `match`: tested first, a failed attribute lookup costs an exception
        self.matcher = None if matcher is None else getattr(matcher, "match", matcher)
        self.compiled = matcher   # gives the bytes test, as CollScan's
        self.filter_spec = filter_spec
        self.examined = 0
        self.key_sink: Optional[dict] = None   # returnKey: record id -> (index, encoded key)
        self.query_filter: Optional[dict] = None   # the whole filter (a clustered scan shows it)

    def explain(self, stats: bool) -> dict:
        child = self.child
        if getattr(child, "index", None) is not None and child.index.kind == "clustered":
            from .clustered_explain import clustered_scan_explain
            shown = self.query_filter if self.query_filter is not None else self.filter_spec
            return clustered_scan_explain(shown, child.direction, stats, self.n_returned,
                                          self.works + child.works, self.examined)
        return super().explain(stats)

    def rows(self) -> Iterator[Row]:
        if self.key_sink is not None:
            return self._rows_keeping_keys(self.key_sink)
        return self._rows()

    def record_ids(self) -> Iterator[Any]:
        """The record ids `rows` yields, for a multi-document write that reads each record again
        as it writes it: without a filter the records are not read here. The counts are those
        of `rows` (in a writer's view no index entry outlives its record)."""
        if self.matcher is not None or self.key_sink is not None or getattr(self.child, "yields_records", False):
            return (row[0] for row in self.rows())
        return self._counted_ids()

    def _counted_ids(self) -> Iterator[Any]:
        for rid in self.child.rids():
            self.works += 1
            self.examined += 1
            self.n_returned += 1
            yield rid

    def _rows_keeping_keys(self, sink: dict) -> Iterator[Row]:
        child = self.child
        for row in self._rows():
            sink[row[0]] = child.current_key()
            yield row

    def _rows(self) -> Iterator[Row]:
        reader, record_key, matcher = self.reader, self.state.record_key, self.matcher
        child = self.child
        records = getattr(child, "yields_records", False)
        if matcher is None and not records:
            return self._all_rows(child, reader.get, record_key)
        return self._matching_rows(child, reader, record_key, matcher, records, self.compiled)

    def _all_rows(self, child: Any, get: Callable[[bytes], Optional[bytes]],
                  record_key: Callable[[int], bytes]) -> Iterator[Row]:
        """_matching_rows without a filter over records read by id (the same counts)."""
        stored = _stored_document
        for rid in child.rids():
            value = get(record_key(rid))
            self.works += 1
            if value is None:
                continue  # deleted since the index entry was read
            self.examined += 1
            self.n_returned += 1
            yield rid, stored(value), None

    def _matching_rows(self, child: Any, reader: Any, record_key: Callable[[int], bytes], matcher: Any,
                       records: bool, compiled: Any = None) -> Iterator[Row]:
        stored = _stored_document
        prefilter = choice = None
        after, chosen_at, kept_below = PREFILTER_AFTER, PREFILTER_CHOSEN, PREFILTER_KEPT_BELOW
        read = tested = passed = 0
        for rid in child.rids():
            value = child.record_value if records else reader.get(record_key(rid))
            self.works += 1
            if value is None:
                continue  # deleted since the index entry was read
            raw = stored(value)
            self.examined += 1
            if matcher is None:
                self.n_returned += 1
                yield rid, raw, None
                continue
            read += 1
            if read == after:
                prefilter = choice = choice_of(compiled)
            elif read == chosen_at and choice is not None:
                prefilter = choice.chosen()
            if prefilter is not None:
                tested += 1
                if not tested & 1023:
                    if passed > kept_below:
                        prefilter = None   # as CollScan: it passed most of the last 1024
                    passed = 0
                if prefilter is not None:
                    if not prefilter(raw):
                        continue   # its bytes rule a match out: not decoded
                    passed += 1
            doc = _decode(raw)
            if matcher(doc):
                self.n_returned += 1
                yield rid, raw, doc

    def describe(self) -> dict:
        return {"filter": self.filter_spec} if self.filter_spec else {}

    def stat_fields(self) -> dict:
        return {"docsExamined": self.examined, "alreadyHasObj": 0}

    def child_explain(self, stats: bool) -> dict:
        return {"inputStage": self.child.explain(stats)}

    def keys_examined(self) -> int:
        return self.child.keys_examined()

    def docs_examined(self) -> int:
        return self.examined


class PassThrough(Stage):
    """Base for stages over one child (SORT, SKIP, LIMIT, PROJECTION): explain and counters pass through."""

    def __init__(self, child) -> None:
        super().__init__()
        self.child = child

    def child_explain(self, stats: bool) -> dict:
        return {"inputStage": self.child.explain(stats)}

    def keys_examined(self) -> int:
        return self.child.keys_examined()

    def docs_examined(self) -> int:
        return self.child.docs_examined()

    def counts(self) -> tuple[int, int]:
        return self.child.counts()


class SortStage(PassThrough):
    """A blocking sort; with a limit it keeps only the top `limit` rows."""

    name = "SORT"

    def __init__(self, child, sort_spec: dict, key: Optional[Callable[[dict], bytes]], limit: int = 0,
                 spill: Spill = NO_SPILL) -> None:
        """`key` None: a shape for explain only, never run."""
        super().__init__(child)
        self.sort_spec, self.key, self.limit, self.spill = sort_spec, key, limit, spill
        self.mem_limit = KNOBS.max_blocking_sort_bytes
        self.spills = 0
        self.spilled_bytes = 0
        self.data_bytes = 0

    def rows(self) -> Iterator[Row]:
        key = self.key
        assert key is not None, "an explain-only SORT shape is never run"
        if self.limit:
            yield from self._top_k(key)
            return
        buffer = SortBuffer(self.mem_limit, self.spill, lambda: sort_exceeded(self.mem_limit),
                            to_disk=_pack_row, from_disk=_unpack_row)
        n = 0
        try:
            for rid, raw, doc in checked(self.child.rows()):
                if doc is None:
                    doc = _decode(raw)
                buffer.add(key(doc), (rid, raw, doc), len(raw))
                self.data_bytes += len(raw)
                n += 1
            self.works = n + 1
            self.spills, self.spilled_bytes = buffer.spills, buffer.spilled_bytes
            for _, row in buffer:
                self.n_returned += 1
                yield row
        finally:
            buffer.close()

    def _top_k(self, key: Callable[[dict], bytes]) -> Iterator[Row]:
        """The first `limit` rows: a bounded heap, never more than `limit` rows held."""
        def decorated() -> Iterator[tuple]:
            for i, (rid, raw, doc) in enumerate(checked(self.child.rows())):
                if doc is None:
                    doc = _decode(raw)
                self.works += 1
                yield key(doc), i, rid, raw, doc
        self.works = 1
        for _, _, rid, raw, doc in heapq.nsmallest(self.limit, decorated()):
            self.n_returned += 1
            yield rid, raw, doc

    def describe(self) -> dict:
        out: dict[str, Any] = {"sortPattern": self.sort_spec, "memLimit": self.mem_limit, "type": "simple"}
        if self.limit:
            out["limitAmount"] = self.limit
        return out

    def stat_fields(self) -> dict:
        return {"totalDataSizeSorted": self.data_bytes, "usedDisk": self.spills > 0, "spills": self.spills}


def sort_exceeded(limit: int) -> CommandError:
    return CommandError(ErrorCode.QueryExceededMemoryLimitNoDiskUseAllowed,
                        f"Sort exceeded memory limit of {limit} bytes, but did not opt in to external sorting.")


_RID = struct.Struct(">q")


def _pack_row(row: Row) -> bytes:
    """A row as a run file holds it: its record id and stored BSON (decoded again on demand)."""
    return _RID.pack(row[0]) + row[1]


def _unpack_row(data: bytes) -> Row:
    return _RID.unpack_from(data)[0], data[8:], None


class Skip(PassThrough):
    name = "SKIP"

    def __init__(self, child, n: int) -> None:
        super().__init__(child)
        self.n = n

    def rows(self) -> Iterator[Row]:
        return self._skipped(self.child.rows())

    def _skipped(self, it: Iterator) -> Iterator:
        for _ in range(self.n):
            if next(it, None) is None:
                return
        for item in it:
            self.n_returned += 1
            yield item

    def describe(self) -> dict:
        return {"skipAmount": self.n}


class SkipKeys(Skip):
    """Skips index entries before they are fetched (when the bounds alone answer the filter)."""

    def rids(self) -> Iterator[int]:
        return self._skipped(self.child.rids())

    def current_key(self) -> tuple:
        return self.child.current_key()


class Limit(PassThrough):
    name = "LIMIT"

    def __init__(self, child, n: int) -> None:
        super().__init__(child)
        self.n = n

    def rows(self) -> Iterator[Row]:
        if self.n <= 0:
            return
        for row in self.child.rows():
            self.n_returned += 1
            yield row
            if self.n_returned >= self.n:
                return

    def describe(self) -> dict:
        return {"limitAmount": self.n}


class Project(PassThrough):
    name = "PROJECTION_DEFAULT"

    def __init__(self, child, spec: dict, projection, plan) -> None:
        super().__init__(child)
        self.spec, self.projection, self.plan = spec, projection, plan
        self.positional = projection.has_positional

    def rows(self) -> Iterator[Row]:
        apply = self.projection.apply
        matcher = self.plan.matcher if self.positional else None
        for rid, raw, doc in self.child.rows():
            if doc is None:
                doc = _decode(raw)
            position = matcher.positional(doc) if matcher is not None else None
            out = apply(doc, position=position)
            self.n_returned += 1
            yield rid, None, out

    def describe(self) -> dict:
        return {"transformBy": self.spec}


class ReturnKey(PassThrough):
    """returnKey: each result is the index key of the entry it came from (`{}` for a collection
    scan), with the document's own values where they are the key's (so 1.0 stays a double)."""

    name = "RETURN_KEY"

    def __init__(self, child, sink: Optional[dict]) -> None:
        super().__init__(child)
        self.sink = sink

    def rows(self) -> Iterator[Row]:
        sink = self.sink
        for rid, raw, doc in self.child.rows():
            entry = sink.pop(rid, None) if sink is not None else None
            if entry is None or entry[1] is None:
                out: dict = {}
            else:
                out = key_document(entry[0], entry[1], doc if doc is not None else _decode(raw))
            self.n_returned += 1
            yield rid, None, out


def key_document(index, key: bytes, doc: dict) -> dict:
    """The index key `key` as a document `{field: value}` in key-pattern order."""
    from ..bsonutil import keycodec
    out: dict = {}
    pos = 0
    for (field, _), direction in zip(index.pattern, index.directions):
        part = key[pos:]
        if direction < 0:
            part = keycodec.invert(part)
        value: Any = _ABSENT
        for candidate in _path_values(doc, field):
            try:
                encoded = keycodec.encode_value(candidate)
            except Exception:  # not a key value (a nested container)
                continue
            if part.startswith(encoded):
                value, size = candidate, len(encoded)
                break
        if value is _ABSENT:  # a hashed or collated key, or null for a missing field
            value = keycodec.decode_key(part, [1])[0]
            size = len(keycodec.encode_value(value))
            if isinstance(value, int) and not isinstance(value, bool) and index.kind == "hashed":
                value = Int64(value)
        out[field] = value
        pos += size
    return out


_ABSENT = object()


def _path_values(value: Any, path: str) -> Iterator[Any]:
    """Values at a dotted path, arrays expanded as index keys expand them."""
    parts = path.split(".")

    def walk(v: Any, i: int) -> Iterator[Any]:
        if i == len(parts):
            if isinstance(v, list):
                yield from v
            yield v
            return
        if isinstance(v, dict):
            if parts[i] in v:
                yield from walk(v[parts[i]], i + 1)
        elif isinstance(v, list):
            if parts[i].isdigit() and int(parts[i]) < len(v):
                yield from walk(v[int(parts[i])], i + 1)
            for item in v:
                if isinstance(item, dict):
                    yield from walk(item, i)
    return walk(value, 0)


_RECORD_ID_FIELD = b"\x12$recordId\x00"


class ShowRecordId(PassThrough):
    """showRecordId: `$recordId` (the record id as a long) appended to every result."""

    def rows(self) -> Iterator[Row]:
        pack = _INT32.pack
        pack_long = _INT64.pack
        for rid, raw, doc in self.child.rows():
            if raw is not None:
                body = raw[4:-1] + _RECORD_ID_FIELD + pack_long(rid) + b"\x00"
                yield rid, pack(len(body) + 4) + body, None
            else:
                yield rid, None, {**doc, "$recordId": Int64(rid)}

    def explain(self, stats: bool) -> dict:
        return self.child.explain(stats)
