"""The stages of a `$text` query, in mongod 7.0's shape (docs/design/text-index.md):

    TEXT_MATCH  <- FETCH (the other predicates as its filter) <- TEXT_OR <- IXSCAN per term

TEXT_OR adds up each record's entry scores over the lookup terms (its textScore) before any
document is read. When nothing asks for the score, mongod reads the terms through a plain OR
(one IXSCAN alone for a single term) and so does this. TEXT_MATCH applies the negations,
phrases and sensitivity options (TextMatcher with `found_in_index`).

A wanted score travels in the document as `query.metadata.TEXT_SCORE_FIELD`; the stored BSON of
such a row is re-encoded with it, so a sort that spills keeps it. `StripMetadata` removes it
before documents leave a find.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any, Optional

import bson

from ..bsonutil import keycodec
from ..query import metadata
from ..query.text import TextMatcher, entry_score, term_range
from . import plan_stages as S
from . import record_format, text_build

_decode = bson.decode


class TermScan(S.Stage):
    """The entries of one term under the prefix values: (record id, score) in index order."""

    name = "IXSCAN"

    def __init__(self, index, reader, term: str, prefix: tuple, ctx=None) -> None:
        super().__init__()
        self.index, self.reader, self.term, self.prefix_values, self.ctx = index, reader, term, prefix, ctx
        self.examined = 0

    def keys(self) -> Iterator[bytes]:
        spec = self.index.spec
        lo, hi = term_range(spec, self.term, self.prefix_values)
        prefix = self.index.prefix
        # backward, as mongod scans a term (highest scores first)
        for key, _ in self.reader.scan(prefix + lo, prefix + hi, True):
            self.examined += 1
            if not self.examined & 1023:
                S.interrupt_check(self.ctx)
            self.n_returned += 1
            yield key
        self.works = self.examined + 1

    def entries(self) -> Iterator[tuple[int, float]]:
        """(record id, the entry's score)."""
        spec, start = self.index.spec, len(self.index.prefix)
        rid_from, key_of = self.index.rid_of_entry, self.index.key_of_entry
        if spec.suffix:
            for key in self.keys():
                yield rid_from(key), entry_score(spec, key_of(key))
            return
        # the score's bytes follow the term's; short texts share few distinct scores
        at = start + len(term_range(spec, self.term, self.prefix_values)[0])
        decoded: dict[bytes, float] = {}
        for key in self.keys():
            raw_score = key_of(key)[at - start:]
            score = decoded.get(raw_score)
            if score is None:
                score = decoded[raw_score] = float(keycodec.decode_value(raw_score))
            yield rid_from(key), score

    def rids(self) -> Iterator[int]:
        rid_from = self.index.rid_of_entry
        for key in self.keys():
            yield rid_from(key)

    def describe(self) -> dict:
        meta = self.index.meta
        return {"keyPattern": dict(meta.key), "indexName": meta.name, "isMultiKey": True,
                "isUnique": False, "isSparse": False, "isPartial": meta.partial is not None,
                "indexVersion": 2, "direction": "backward", "indexBounds": {}}

    def stat_fields(self) -> dict:
        return {"keysExamined": self.examined, "dupsTested": self.examined, "dupsDropped": 0}

    def keys_examined(self) -> int:
        return self.examined


def _children_explain(scans: list, stats: bool) -> dict:
    if len(scans) == 1:
        return {"inputStage": scans[0].explain(stats)}
    return {"inputStages": [s.explain(stats) for s in scans]}


class TextOr(S.Stage):
    """mongod's TEXT_OR: every lookup entry read first, scores summed per record id."""

    name = "TEXT_OR"

    def __init__(self, scans: list[TermScan]) -> None:
        super().__init__()
        self.scans = scans
        self.scores: dict[int, float] = {}
        self.by_score = False  # give the record ids best score first (a sort on the score alone)

    def rids(self) -> Iterator[int]:
        scores = self.scores
        for scan in self.scans:
            for rid, score in scan.entries():
                scores[rid] = scores.get(rid, 0.0) + score
        self.works = sum(s.examined for s in self.scans) + len(scores) + 1
        order = sorted(scores, key=scores.__getitem__, reverse=True) if self.by_score else scores
        for rid in order:
            self.n_returned += 1
            yield rid

    def child_explain(self, stats: bool) -> dict:
        return _children_explain(self.scans, stats)

    def stat_fields(self) -> dict:
        return {"docsExamined": 0}

    def keys_examined(self) -> int:
        return sum(s.examined for s in self.scans)


class TermUnion(S.OrScan):
    """The terms read through mongod's OR (no score wanted): record ids de-duplicated."""

    def child_explain(self, stats: bool) -> dict:
        return _children_explain(self.scans, stats)


class TextMatch(S.Stage):
    """TEXT_MATCH: keeps the fetched documents the query matches; adds their textScore."""

    name = "TEXT_MATCH"

    def __init__(self, child: S.Fetch, plan: Any, scores: Optional[dict]) -> None:
        super().__init__()
        self.child, self.plan, self.scores = child, plan, scores
        self.matcher = TextMatcher(plan.index.spec, plan.query)
        self.rejected = 0

    def rows(self) -> Iterator[S.Row]:
        matches, scores, field = self.matcher.matches, self.scores, metadata.TEXT_SCORE_FIELD
        q = self.plan.query
        # found by the lookup, nothing else to check: the stored bytes pass through undecoded
        trivial = not (q.case_sensitive or q.diacritic_sensitive or q.negated_terms or q.phrases
                       or q.negated_phrases)
        for rid, raw, doc in self.child.rows():
            self.works += 1
            if not trivial:
                if doc is None:
                    doc = _decode(raw)
                if not matches(doc, found_in_index=True):
                    self.rejected += 1
                    continue
            self.n_returned += 1
            if scores is not None:
                score = scores.get(rid, 0.0)
                if doc is not None:
                    doc[field] = score
                raw = _with_score(raw, score)
            yield rid, raw, doc

    def describe(self) -> dict:
        plan = self.plan
        prefix = {f: v for (f, _), v in zip(plan.index.spec.prefix, plan.prefix)}
        out = {"indexPrefix": prefix, "indexName": plan.index.meta.name,
               "parsedTextQuery": plan.query.explain(), "textIndexVersion": 3}
        synonyms = plan.index.meta.options.get("synonyms")
        if synonyms is not None:   # the extension: parsedTextQuery's terms include the synonyms
            out["synonyms"] = synonyms
        return out

    def stat_fields(self) -> dict:
        return {"docsRejected": self.rejected}

    def child_explain(self, stats: bool) -> dict:
        return {"inputStage": self.child.explain(stats)}

    def keys_examined(self) -> int:
        return self.child.keys_examined()

    def docs_examined(self) -> int:
        return self.child.docs_examined()


_SCORE_ELEMENT = b"\x01" + metadata.TEXT_SCORE_FIELD.encode() + b"\x00"
_LENGTH = struct.Struct("<i")
_DOUBLE = struct.Struct("<d")


def _with_score(raw: bytes, score: float) -> bytes:
    """The stored BSON with the score field appended (a double element before the final 0)."""
    body = raw[4:-1] + _SCORE_ELEMENT + _DOUBLE.pack(score)
    return _LENGTH.pack(len(body) + 5) + body + b"\x00"


class TextUnion(S.Stage):
    """A `$text` branch of a top-level `$or` beside indexed branches: their rows, de-duplicated."""

    name = "OR"

    def __init__(self, children: list) -> None:
        super().__init__()
        self.children = children
        self.dups = 0

    def rows(self) -> Iterator[S.Row]:
        seen: set = set()
        for child in self.children:
            for row in child.rows():
                if row[0] in seen:
                    self.dups += 1
                    continue
                seen.add(row[0])
                self.n_returned += 1
                yield row

    def child_explain(self, stats: bool) -> dict:
        return {"inputStages": [c.explain(stats) for c in self.children]}

    def stat_fields(self) -> dict:
        return {"dupsTested": self.n_returned + self.dups, "dupsDropped": self.dups}

    def keys_examined(self) -> int:
        return sum(c.keys_examined() for c in self.children)

    def docs_examined(self) -> int:
        return sum(c.docs_examined() for c in self.children)


class ScoreOrder(S.SortStage):
    """mongod's SORT on `{$meta: "textScore"}` alone: TEXT_OR already gives the record ids best
    first, and the filters after it keep their order, so rows stream (a limit fetches no more
    documents than it returns). Equal scores keep the lookup's order, as a stable sort would."""

    def rows(self) -> Iterator[S.Row]:
        for row in self.child.rows():
            self.n_returned += 1
            yield row
        self.works = self.n_returned + 1


def order_by_score(root: S.Stage) -> bool:
    """Have the TEXT_OR under `root` give best scores first; False when there is none."""
    stage: Any = root
    while isinstance(stage, (TextMatch, S.Fetch)):
        stage = stage.child
    if isinstance(stage, TextOr):
        stage.by_score = True
        return True
    return False


class StripMetadata(S.PassThrough):
    """Removes the metadata fields (textScore, geoNearDistance, geoNearPoint) before documents
    leave a find (not an explain stage)."""

    def rows(self) -> Iterator[S.Row]:
        fields = tuple(metadata.FIELDS.values())
        for rid, raw, doc in self.child.rows():
            if doc is None:
                doc = _decode(raw)
            for field in fields:
                if field in doc:
                    del doc[field]
                    raw = None
            self.n_returned += 1
            yield rid, raw, doc

    def explain(self, stats: bool) -> dict:
        return self.child.explain(stats)


class TextCatchUp(S.Stage):
    """The lookup of a text index still building in the background (text_build.py), completed:
    its record ids outside the range the builder has not reached, then the records of that
    range that hold a lookup term, read and scored here. Together: what a ready index gives.
    (A ginkgodb stage: mongod has no background-built text index to read.)"""

    name = "TEXT_CATCH_UP"

    def __init__(self, lookup: Any, state: Any, reader: Any, index: Any, query: Any,
                 build_state: dict, scores: Optional[dict], ctx=None) -> None:
        super().__init__()
        self.lookup, self.coll, self.reader, self.index, self.query = lookup, state, reader, index, query
        self.first, self.last = int(build_state["next"]), int(build_state["end"])
        self.scores, self.ctx = scores, ctx
        self.scanned = 0

    def rids(self) -> Iterator[int]:
        from ..query.text.scoring import score_document
        from .text_build import record_range
        first, last = self.first, self.last
        for rid in self.lookup.rids():
            if not first <= rid <= last:   # the range's records are all read below
                self.n_returned += 1
                yield rid
        spec, terms, scores = self.index.spec, self.query.terms_for_bounds, self.scores
        partial = self.index.meta.partial is not None
        lo, hi = record_range(self.coll, {"next": first, "end": last})
        rid_of = self.coll.rid_of_record_key
        for key, value in self.reader.scan(lo, hi):
            self.scanned += 1
            if not self.scanned & 1023:
                S.interrupt_check(self.ctx)
            doc = _decode(record_format.document(value))
            if partial and not self.index.keys(doc)[0]:
                continue
            held = score_document(spec, doc)
            found = [held[t] for t in terms if t in held]
            if not found:
                continue
            rid = rid_of(key)
            if scores is not None:   # replaces what TEXT_OR summed from entries a write made meanwhile
                scores[rid] = sum(found)
            self.n_returned += 1
            yield rid
        self.works = self.lookup.works + self.scanned + 1

    def describe(self) -> dict:
        return {"unindexedRecordIds": [self.first, self.last]}

    def stat_fields(self) -> dict:
        return {"docsExamined": self.scanned}

    def child_explain(self, stats: bool) -> dict:
        return {"inputStage": self.lookup.explain(stats)}

    def keys_examined(self) -> int:
        return self.lookup.keys_examined()

    def docs_examined(self) -> int:
        return self.scanned


def text_root(state, reader, plan: Any, want_score: bool, compile_filter, ctx=None) -> S.Stage:
    """The stages answering a TextPlan. `compile_filter(spec)` compiles the other predicates."""
    text_ix = state.index(plan.index.meta.name)
    terms = plan.query.terms_for_bounds
    scans = [TermScan(text_ix, reader, term, plan.prefix, ctx) for term in terms]
    scores: Optional[dict] = None
    lookup: Any
    if want_score:
        lookup = TextOr(scans)
        scores = lookup.scores
    elif len(scans) == 1:
        lookup = scans[0]
    else:
        lookup = TermUnion(scans)  # type: ignore[arg-type]
    if not scans:
        lookup = TermUnion([])
    building = text_build.state_of(plan.index.meta)
    if building is not None and scans:   # built in the background, not finished yet
        lookup = TextCatchUp(lookup, state, reader, text_ix, plan.query, building, scores, ctx)
    residual = plan.residual
    if plan.nested is not None:
        return _nested_root(state, reader, plan, lookup, scores, compile_filter, ctx)
    if plan.or_scans:
        # the other conjuncts apply to every branch; each indexed branch also to its own filter
        text_part = TextMatch(S.Fetch(state, reader, lookup, compile_filter(residual) if residual else None,
                                      residual), plan, scores)
        children: list = [text_part]
        for scan, branch in zip(plan.or_scans, plan.or_filters):
            ix = state.index(scan.index.name)
            ixscan = S.IndexScan(ix, reader, scan.bounds.key_ranges(), scan.bounds.to_explain, scan.direction,
                                 multikey=bool(scan.index.multikey_paths), ctx=ctx)
            spec = {"$and": [branch, residual]} if residual else branch
            children.append(S.Fetch(state, reader, ixscan, compile_filter(spec), spec))
        return TextUnion(children)
    fetch = S.Fetch(state, reader, lookup, compile_filter(residual) if residual else None, residual)
    return TextMatch(fetch, plan, scores)


# --- a $text nested under $and/$or ----------------------------------------------------------

class TextCandidates(S.Stage):
    """OR: the text lookup's record ids, then each indexed `$or` branch's, once each; remembers
    which came from the lookup (what `$text` means for the filter above)."""

    name = "OR"

    def __init__(self, lookup: Any, scans: list) -> None:
        super().__init__()
        self.lookup, self.scans = lookup, scans
        self.found: set = set()
        self.current: Any = None   # the record id yielded last
        self.dups = 0

    def rids(self) -> Iterator[int]:
        found = self.found
        for rid in self.lookup.rids():   # all of them first: `found` is complete for the scans
            if rid in found:
                self.dups += 1
                continue
            found.add(rid)
            self.n_returned += 1
            self.current = rid
            yield rid
        seen = set(found)
        for scan in self.scans:
            for rid in scan.rids():
                if rid in seen:
                    self.dups += 1
                    continue
                seen.add(rid)
                self.n_returned += 1
                self.current = rid
                yield rid

    def child_explain(self, stats: bool) -> dict:
        return {"inputStages": [c.explain(stats) for c in [self.lookup, *self.scans]]}

    def stat_fields(self) -> dict:
        return {"dupsTested": self.n_returned + self.dups, "dupsDropped": self.dups}

    def keys_examined(self) -> int:
        return sum(c.keys_examined() for c in [self.lookup, *self.scans])


class TextScoreOf(S.PassThrough):
    """Adds the textScore of the documents the lookup found (others found by an indexed `$or`
    branch get none, as in the top-level `$or` form)."""

    def __init__(self, child: Any, scores: dict) -> None:
        super().__init__(child)
        self.scores = scores

    def rows(self) -> Iterator[S.Row]:
        scores, field = self.scores, metadata.TEXT_SCORE_FIELD
        for rid, raw, doc in self.child.rows():
            if rid in scores:
                score = scores[rid]
                if doc is not None:
                    doc[field] = score
                raw = _with_score(raw, score)
            self.n_returned += 1
            yield rid, raw, doc

    def explain(self, stats: bool) -> dict:
        return self.child.explain(stats)


def _nested_matcher(filt: dict, text_matches: Any, compile_filter: Any) -> Any:
    """The filter as a predicate, `$text` being `text_matches(doc)`; the parts without `$text`
    are compiled as usual."""
    from ..planner.text_plans import contains_text

    def compiled(spec: dict) -> Any:
        m = compile_filter(spec)
        return getattr(m, "match", m)

    def build(node: dict) -> Any:
        parts = []
        plain = {}
        for key, value in node.items():
            if key == "$text":
                parts.append(text_matches)
            elif key in ("$and", "$or") and isinstance(value, list) and contains_text({key: value}):
                subs = [build(b) if contains_text(b) else compiled(b) for b in value]
                if key == "$and":
                    parts.append(lambda doc, subs=subs: all(p(doc) for p in subs))
                else:
                    parts.append(lambda doc, subs=subs: any(p(doc) for p in subs))
            else:
                plain[key] = value
        if plain:
            parts.append(compiled(plain))
        return lambda doc: all(p(doc) for p in parts)
    return build(filt)


def _nested_root(state, reader, plan: Any, lookup: Any, scores: Optional[dict], compile_filter,
                 ctx) -> S.Stage:
    scans = []
    for scan in plan.or_scans:
        ix = state.index(scan.index.name)
        scans.append(S.IndexScan(ix, reader, scan.bounds.key_ranges(), scan.bounds.to_explain,
                                 scan.direction, multikey=bool(scan.index.multikey_paths), ctx=ctx))
    candidates = TextCandidates(lookup, scans)
    matcher = TextMatcher(plan.index.spec, plan.query)
    found = candidates.found

    def text_matches(doc: dict) -> bool:
        # FETCH applies its filter to the record the candidates yielded last
        return candidates.current in found and matcher.matches(doc, found_in_index=True)

    whole = _nested_matcher(plan.nested, text_matches, compile_filter)
    fetch = S.Fetch(state, reader, candidates, whole, plan.nested)
    return TextScoreOf(fetch, scores) if scores is not None else fetch
