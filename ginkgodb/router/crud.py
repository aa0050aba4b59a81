"""CRUD through the router: targeting from the chunk map, fan-out to shards, merged replies.

Each command is first parsed with its declaration in commands/ (so bad input gets mongod's
error and nothing is sent), then targeted (targeting.py). Unsharded collections go whole to the
database's primary shard. Replies are merged as mongos merges them: counts summed, write errors
re-indexed to the client's statements, sorted streams sort-merged (merge.py).
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Mapping
from typing import Any, Optional

import bson
from bson.binary import UUID_SUBTYPE, Binary
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument

from ..commands.declare import COMMANDS
from ..errors import CommandError, ErrorCode
from ..limits import MAX_WRITE_BATCH_SIZE
from ..query.pipeline import PipelineContext, run_pipeline
from ..query.pipeline.core import ENGINE_STAGES
from ..query.projection import compile_projection
from .chunks import ChunkMap
from .group_split import split_group
from .merge import merge_streams, shard_limit
from .shards import ShardCursor, ShardReplyError, StaleConfig, peek
from .state import Router, RouterCursor
from .targeting import full_key_equality, shards_of, target

#: fields a router does not pass on to shards (sessions and gossip are the router's own)
ROUTER_ONLY = frozenset({"lsid", "txnNumber", "$clusterTime", "$readPreference", "$db", "autocommit",
                         "startTransaction", "apiVersion", "apiStrict", "apiDeprecationErrors", "$audit",
                         "$client", "shardVersion", "databaseVersion"})
DEFAULT_BATCH = 101
MAX_BATCH_BYTES = 8 * 1024 * 1024
SUB_BATCH_BYTES = 12 * 1024 * 1024   # a write command to a shard: under the 16 MB document limit
SINGLE_WRITE = ("A single {} on a sharded collection must contain an exact match on _id (and have the "
                "collection default collation) or contain the shard key (and have the simple collation). ")


def for_shard(cmd: Mapping) -> dict:
    return {k: v for k, v in cmd.items() if k not in ROUTER_ONLY}


def parse(name: str, cmd: Mapping) -> Any:
    """The command's own declaration checks its fields (mongod's errors for bad input)."""
    spec = COMMANDS[name]
    return spec.parse(cmd, name)


def _doc(raw: Any) -> dict:
    if isinstance(raw, RawBSONDocument):
        return bson.decode(raw.raw)
    return dict(raw)


def _check_reply(reply: Mapping) -> Mapping:
    if reply.get("ok") != 1.0:
        raise ShardReplyError(reply)
    return reply


def _targets(router: Router, cmap: Optional[ChunkMap], db: str, filter: Optional[Mapping],
             collation: Any = None) -> list[str]:
    if cmap is None:
        return [router.primary_shard(db) or ""]
    chunks = None if collation else target(filter, cmap)
    return shards_of(chunks, cmap)


# -- find, getMore, killCursors -------------------------------------------------------------------
def first_batch(router: Router, ns: str, stream: Iterator[Any], parts: list, batch_size: Optional[int],
                single: bool = False, key: str = "firstBatch") -> dict:
    """The first batch (`batch_size` None: mongod's default of 101; 0: empty, the cursor open)."""
    batch: list[Any] = []
    size = 0
    if batch_size == 0 and not single:
        return {"cursor": {key: batch, "id": router.open_cursor(RouterCursor(ns, stream, parts)), "ns": ns}}
    limit = batch_size or DEFAULT_BATCH
    done = False
    while len(batch) < limit and size < MAX_BATCH_BYTES:
        try:
            doc = next(stream)
        except StopIteration:
            done = True
            break
        batch.append(doc)
        size += len(doc.raw) if isinstance(doc, RawBSONDocument) else 0
    cid: Any = Int64(0)
    if not done and not single:
        cid = router.open_cursor(RouterCursor(ns, stream, parts))
    else:
        for p in parts:
            p.kill()
    return {"cursor": {key: batch, "id": cid, "ns": ns}}


def find(router: Router, cmd: Mapping) -> dict:
    args = parse("find", cmd)
    ns = f"{args.db}.{args.coll}"
    if args.tailable or args.await_data:
        cmap = router.chunk_map(ns)
        if cmap is not None:
            raise CommandError(ErrorCode.NotImplemented, "tailable cursors on a sharded collection are not "
                                                         "supported by the ginkgodb router")

    def attempt(cmap: Optional[ChunkMap]) -> dict:
        shards = _targets(router, cmap, args.db, args.filter, args.collation)
        return _run_find(router, cmd, args, ns, cmap, shards)
    return router.with_fresh_map(ns, attempt)


def _collated(collation: Any) -> bool:
    return isinstance(collation, Mapping) and collation.get("locale", "simple") != "simple"


def owned_only(part: Any, cmap: ChunkMap, shard: str) -> Iterator[Any]:
    """The documents of a shard's stream that belong to chunks it owns in `cmap` (a migration's
    clone on the recipient, or the donor's copy awaiting the range deleter, are dropped: the
    filtering mongod's shards do themselves)."""
    key, chunk_for = cmap.key, cmap.chunk_for
    return (d for d in part if chunk_for(key.key_of(d)).shard == shard)


def ask(router: Router, shard: str, db: str, cmd: Mapping, cmap: Optional[ChunkMap], *, raw: bool = False,
        fallback: Any = None) -> tuple[Any, bool]:
    """Send `cmd` counting on the shard holding no orphans; when it does (StaleConfig with
    `orphans`), send `fallback(cmd)` instead (the filtering path). (reply, had orphans)."""
    if cmap is None:
        return router.shards.command(shard, db, cmd, raw=raw), False
    try:
        return router.shards.command(shard, db, router.versioned(cmd, cmap, shard, no_orphans=True), raw=raw), False
    except StaleConfig as exc:
        if not exc.reply.get("orphans"):
            raise
    again = fallback(cmd) if fallback is not None else cmd
    return router.shards.command(shard, db, router.versioned(again, cmap, shard), raw=raw), True


def owned_ids(router: Router, cmap: ChunkMap, shard: str, db: str, coll: str, filter: Mapping) -> list[Any]:
    """`_id`s of the documents matching `filter` on `shard` that the shard owns."""
    cmd = {"find": coll, "filter": dict(filter), "projection": {**dict.fromkeys(cmap.key.fields, 1), "_id": 1},
           "batchSize": 100000}
    reply = _check_reply(router.shards.command(shard, db, router.versioned(cmd, cmap, shard), raw=True))
    part = ShardCursor(router.shards, shard, db, coll, reply, 100000)
    return [d["_id"] for d in owned_only(part, cmap, shard)]


def restricted(filter: Optional[Mapping], ids: list[Any]) -> dict:
    return {"$and": [dict(filter or {}), {"_id": {"$in": ids}}]}


def _run_find(router: Router, cmd: Mapping, args: Any, ns: str, cmap: Optional[ChunkMap], shards: list[str]) -> dict:
    base = for_shard(cmd)
    sort = args.sort or None
    projection = args.projection or None
    merge_projection = None
    if cmap is not None and (args.return_key or args.show_record_id):
        raise CommandError(ErrorCode.NotImplemented, f"find with {'returnKey' if args.return_key else 'showRecordId'} "
                                                     "on a sharded collection is not supported by the ginkgodb router")
    if cmap is not None and sort and _collated(args.collation):
        raise CommandError(ErrorCode.NotImplemented, "a sort with a collation on a sharded collection is not "
                                                     "supported by the ginkgodb router (the merge compares simply)")
    if cmap is not None:   # skip, limit and the projection apply after the ownership filter and the merge
        for name in ("skip", "limit", "singleBatch", "projection"):
            base.pop(name, None)
        wanted = shard_limit(args.skip or 0, args.limit or 0)
        if wanted:
            base["limit"] = wanted
        if projection:
            if any(k.endswith(".$") or k == "$" for k in projection):
                raise CommandError(ErrorCode.NotImplemented, "a positional projection on a sharded collection "
                                                             "is not supported by the ginkgodb router")
            merge_projection = compile_projection(projection, query=args.filter)

    def without_limit(c: Mapping) -> dict:
        return {k: v for k, v in c.items() if k != "limit"}
    if cmap is None or (len(shards) == 1 and not args.collation and full_key_equality(args.filter, cmap)):
        return _one_shard_find(router, cmd, args, ns, cmap, shards[0])
    parts = []
    try:
        for shard in shards:
            reply, _ = ask(router, shard, args.db, base, cmap, raw=True, fallback=without_limit)
            _check_reply(reply)
            parts.append(ShardCursor(router.shards, shard, args.db, args.coll, reply, args.batch_size or 0))
    except BaseException:
        for p in parts:
            p.kill()
        raise
    if cmap is None:
        stream: Iterator[Any] = iter(parts[0])
    else:
        owned = [owned_only(p, cmap, p.shard) for p in parts]
        stream = merge_streams(owned, sort, args.skip or 0, args.limit or 0)
        if merge_projection is not None:
            proj = merge_projection
            stream = (proj.apply(_doc(d)) for d in stream)
    single = bool(args.single_batch) and cmap is not None
    return first_batch(router, ns, stream, parts, args.batch_size, single)


def _one_shard_find(router: Router, cmd: Mapping, args: Any, ns: str, cmap: Optional[ChunkMap],
                    shard: str) -> Any:
    """A find one shard answers whole: the unsharded collection's primary shard, or the owner of
    the one shard key value the filter pins (every document it can match lies in that shard's
    chunk, so there are no orphans to filter and nothing to merge). The shard applies skip,
    limit, projection and batching itself; an exhausted reply goes back to the client as the
    shard's bytes, never decoded (the targeted-read cost of docs/design/sharding.md)."""
    reply = router.shards.fast_command(shard, args.db, router.versioned(for_shard(cmd), cmap, shard))
    if isinstance(reply, RawBSONDocument) and peek(reply.raw, b"ok") == 1.0 and peek(reply.raw, b"cursor", b"id") == 0:
        return reply      # the whole answer: the shard's bytes, not decoded
    _check_reply(reply)
    if not reply["cursor"]["id"]:
        return reply
    return _shard_cursor_batch(router, args, ns, shard, reply)


def _shard_cursor_batch(router: Router, args: Any, ns: str, shard: str, reply: Mapping) -> dict:
    """The client's first batch of a one-shard find whose shard cursor stays open: the router's
    cursor around it (the client's getMores come to the router)."""
    part = ShardCursor(router.shards, shard, args.db, args.coll, reply, args.batch_size or 0)
    return first_batch(router, ns, iter(part), [part], args.batch_size)


def adopt_one_shard_cursor(router: Router, cmd: Mapping, shard: str, reply: Mapping) -> dict:
    """The reply to `cmd`, a find one shard answered with an open cursor (`reply`, ok: 1),
    received without the router's parse (passthrough.py): parsed now, wrapped as above. Raises
    what the parse raises; the caller kills the shard's cursor then."""
    args = parse("find", cmd)
    return _shard_cursor_batch(router, args, f"{args.db}.{args.coll}", shard, reply)


def get_more(router: Router, cmd: Mapping) -> dict:
    args = parse("getMore", cmd)
    cid = int(args.value)
    cursor = router.take_cursor(cid)
    ns = f"{args.db}.{args.collection}"
    if cursor is None:
        raise CommandError(ErrorCode.CursorNotFound, f"cursor id {cid} not found")
    if cursor.ns != ns:
        raise CommandError(ErrorCode.Unauthorized,
                           f"Requested getMore on namespace '{ns}', but cursor belongs to a different namespace "
                           f"{cursor.ns}")
    cursor.last_used = time.monotonic()
    batch: list[Any] = []
    size, done = 0, False
    limit = args.batch_size or 0
    while (not limit or len(batch) < limit) and size < MAX_BATCH_BYTES:
        try:
            doc = next(cursor.stream)
        except StopIteration:
            done = True
            break
        batch.append(doc)
        size += len(doc.raw) if isinstance(doc, RawBSONDocument) else 256
    if done:
        router.close_cursor(cid)
    return {"cursor": {"nextBatch": batch, "id": Int64(0 if done else cid), "ns": ns}}


def kill_cursors(router: Router, cmd: Mapping) -> dict:
    args = parse("killCursors", cmd)
    killed: list[Int64] = []
    missing: list[Int64] = []
    for cid in args.cursors or []:
        (killed if router.close_cursor(int(cid)) else missing).append(Int64(int(cid)))
    return {"cursorsKilled": killed, "cursorsNotFound": missing, "cursorsAlive": [], "cursorsUnknown": []}


# -- inserts ----------------------------------------------------------------------------------------
def insert(router: Router, cmd: Mapping) -> dict:
    args = parse("insert", cmd)
    ns = f"{args.db}.{args.coll}"
    cmap = router.chunk_map(ns)
    if cmap is None:   # the database's primary shard, in pieces under its document limit
        shard = router.primary_shard(args.db) or ""
        items = list(args.documents)
        return _write_runs(router, cmd, args.db, None, "documents", [(shard, items, list(range(len(items))))],
                           args.ordered)
    docs = []
    for raw in args.documents:
        doc = _doc(raw)
        if "_id" not in doc:
            doc = {"_id": ObjectId(), **doc}
        docs.append(doc)
    ordered = args.ordered

    def attempt(cmap: Optional[ChunkMap]) -> dict:
        assert cmap is not None
        owners: list[Optional[str]] = []
        failed: list[dict] = []
        for i, d in enumerate(docs):
            try:
                owners.append(cmap.chunk_for(cmap.key.key_of(d)).shard)
            except CommandError as exc:   # a write error at its index, as mongos reports it
                owners.append(None)
                failed.append(exc.to_write_error(i))
                if ordered:
                    break
        runs: list[tuple[str, list[int]]] = []
        if ordered:   # consecutive documents of one shard go together, in order
            for i, shard in enumerate(owners):
                if shard is None:
                    break
                if runs and runs[-1][0] == shard:
                    runs[-1][1].append(i)
                else:
                    runs.append((shard, [i]))
        else:
            by_shard: dict[str, list[int]] = {}
            for i, shard in enumerate(owners):
                if shard is not None:
                    by_shard.setdefault(shard, []).append(i)
            runs = list(by_shard.items())
        out = _write_runs(router, cmd, args.db, cmap, "documents", [(s, [docs[i] for i in idx], idx)
                                                                   for s, idx in runs], ordered)
        if failed and not (ordered and out.get("writeErrors")):
            out["writeErrors"] = sorted(out.get("writeErrors", []) + failed, key=lambda e: e["index"])
        return out
    return router.with_fresh_map(ns, attempt)


def _sized(runs: list[tuple[str, list, list[int]]]) -> Iterator[tuple[str, list, list[int]]]:
    """Runs cut so that each command sent stays under a shard's BSON document limit (a client's
    batch arrives as a 48 MB message; the router sends it on as one command document)."""
    for shard, items, indexes in runs:
        if len(items) <= 1:
            yield shard, items, indexes
            continue
        start, size = 0, 0
        for j, item in enumerate(items):
            n = len(item.raw) if isinstance(item, RawBSONDocument) else len(bson.encode(item))
            if j > start and (size + n > SUB_BATCH_BYTES or j - start >= MAX_WRITE_BATCH_SIZE):
                yield shard, items[start:j], indexes[start:j]
                start, size = j, 0
            size += n
        yield shard, items[start:], indexes[start:]


def _write_runs(router: Router, cmd: Mapping, db: str, cmap: Optional[ChunkMap], field: str,
                runs: list[tuple[str, list, list[int]]], ordered: bool) -> dict:
    """Send each run (shard, statements, their indexes in the client's batch); merged reply."""
    n = 0
    n_modified = 0
    errors: list[dict] = []
    upserted: list[dict] = []
    concern_error: Optional[Mapping] = None
    base = for_shard(cmd)
    parts: dict[str, int] = {}
    for shard, items, indexes in _sized(runs):
        sub = dict(base)
        sub[field] = items
        if retryable(cmd):
            sub.update(part_session(cmd, shard, parts.get(shard, 0)))
            parts[shard] = parts.get(shard, 0) + 1
        if cmap is None or field == "documents" or all(full_key_equality(st.get("q"), cmap) for st in items):
            reply = router.shards.command(shard, db, router.versioned(sub, cmap, shard))
        else:
            def owned(c: Mapping, shard: str = shard) -> dict:
                coll = str(c[next(iter(c))])
                return {**c, field: [{**st, "q": restricted(st.get("q"), owned_ids(router, cmap, shard, db, coll,
                                                                                   st.get("q") or {}))}
                                     for st in c[field]]}
            reply, _ = ask(router, shard, db, sub, cmap, fallback=owned)
        if reply.get("ok") != 1.0:
            raise ShardReplyError(reply)
        n += int(reply.get("n", 0))
        n_modified += int(reply.get("nModified", 0))
        for up in reply.get("upserted", []):
            upserted.append({**up, "index": indexes[int(up["index"])]})
        for err in reply.get("writeErrors", []):
            errors.append({**err, "index": indexes[int(err["index"])]})
        if "writeConcernError" in reply and concern_error is None:
            concern_error = reply["writeConcernError"]
        if ordered and reply.get("writeErrors"):
            break
    out: dict[str, Any] = {"n": n}
    if field == "updates":
        out["nModified"] = n_modified
        if upserted:
            out["upserted"] = sorted(upserted, key=lambda u: u["index"])
    if errors:
        out["writeErrors"] = sorted(errors, key=lambda e: e["index"])
    if concern_error is not None:
        out["writeConcernError"] = dict(concern_error)
    return out


def retryable(cmd: Mapping) -> bool:
    """A retryable write (lsid and txnNumber, outside a transaction): the shards get the session."""
    return "txnNumber" in cmd and isinstance(cmd.get("lsid"), Mapping) and "autocommit" not in cmd


def part_session(cmd: Mapping, shard: str, part: int) -> dict:
    """The lsid and txnNumber of the `part`-th command a retryable write sends `shard`: the
    client's session for the first, a session derived from it for the next (a shard keeps one
    answer per session and txnNumber, so a retry of the whole write replays each part's own
    answer when the router splits it the same way: the same chunk map)."""
    lsid = cmd["lsid"]
    if not part:
        return {"lsid": lsid, "txnNumber": cmd["txnNumber"]}
    uid = lsid.get("id")
    raw = bytes(uid) if isinstance(uid, bytes) else bytes(getattr(uid, "bytes", b""))
    derived = hashlib.blake2b(raw + shard.encode() + part.to_bytes(4, "little"), digest_size=16).digest()
    return {"lsid": {"id": Binary(derived, UUID_SUBTYPE)}, "txnNumber": cmd["txnNumber"]}


def _check_ok(reply: Mapping) -> dict:
    if reply.get("ok") != 1.0:
        raise ShardReplyError(reply)
    return dict(reply)


def _strip(reply: dict) -> dict:
    for k in ("$clusterTime", "operationTime", "electionId", "opTime", "ok"):
        reply.pop(k, None)
    return reply


# -- updates and deletes --------------------------------------------------------------------------
def _touches_key(update: Any, cmap: ChunkMap) -> bool:
    if isinstance(update, list):
        return True   # a pipeline may set anything
    if not isinstance(update, Mapping):
        return False
    if not any(str(k).startswith("$") for k in update):
        return False
    for spec in update.values():
        if isinstance(spec, Mapping):
            for path in spec:
                for f in cmap.key.fields:
                    if path == f or path.startswith(f + ".") or f.startswith(path + "."):
                        return True
    return False


def _single_target(router: Router, cmap: ChunkMap, filter: Mapping, what: str, upsert: bool) -> list[str]:
    if full_key_equality(filter, cmap):
        return shards_of(target(filter, cmap), cmap)
    if upsert:
        raise CommandError(ErrorCode.ShardKeyNotFound,
                           f"Failed to target upsert by query :: could not extract exact shard key from {filter}")
    ident = filter.get("_id")
    if "_id" in filter and not isinstance(ident, (Mapping, list)):
        return cmap.shards()
    raise CommandError(ErrorCode.InvalidOptions, SINGLE_WRITE.format(what) + f"Query: {filter}")


def _routed_writes(router: Router, cmd: Mapping, args: Any, field: str, items: Any,
                   plan: Any) -> dict:
    """An update or delete command through the router: the database's primary shard when the
    collection is unsharded (in pieces under its document limit), else each statement where
    `plan(router, cmap, statement)` targets it, retried on a fresher chunk map."""
    ns = f"{args.db}.{args.coll}"
    cmap = router.chunk_map(ns)
    if cmap is None:
        shard = router.primary_shard(args.db) or ""
        items = list(items)
        return _write_runs(router, cmd, args.db, None, field, [(shard, items, list(range(len(items))))],
                           args.ordered)
    statements = [_doc(s) for s in items]

    def attempt(cmap: Optional[ChunkMap]) -> dict:
        assert cmap is not None
        return _planned_writes(router, cmd, args.db, cmap, field, statements,
                               lambda st: plan(router, cmap, st), args.ordered)
    return router.with_fresh_map(ns, attempt)


def update(router: Router, cmd: Mapping) -> dict:
    args = parse("update", cmd)
    return _routed_writes(router, cmd, args, "updates", args.updates, _plan_update)


def _plan_update(router: Router, cmap: ChunkMap, st: dict) -> list[str]:
    q = st.get("q") or {}
    u = st.get("u")
    replacement = isinstance(u, Mapping) and bool(u) and not str(next(iter(u))).startswith("$")
    if _touches_key(u, cmap):
        raise CommandError(ErrorCode.NotImplemented, "changing a document's shard key value is not "
                                                     "supported by the ginkgodb router")
    if st.get("multi"):
        if st.get("upsert") and not full_key_equality(q, cmap):
            raise CommandError(ErrorCode.ShardKeyNotFound, "Failed to target upsert by query :: "
                               f"could not extract exact shard key from {q}")
        return shards_of(target(q, cmap), cmap) if not st.get("collation") else cmap.shards()
    if replacement:
        return [_replacement_target(cmap, q, u)]   # type: ignore[arg-type]
    return _single_target(router, cmap, q, "update", bool(st.get("upsert")))


def _replacement_target(cmap: ChunkMap, q: Mapping, replacement: Mapping) -> str:
    """A replacement is targeted by its own shard key (7.0); one that would move the document to
    another chunk than the filter's is a shard key change."""
    chunk = cmap.chunk_for(cmap.key.key_of(replacement))
    if full_key_equality(q, cmap):
        pinned = target(q, cmap) or []
        if pinned and pinned[0] != chunk:
            raise CommandError(ErrorCode.NotImplemented, "changing a document's shard key value is not "
                                                         "supported by the ginkgodb router")
    return chunk.shard


def _planned_writes(router: Router, cmd: Mapping, db: str, cmap: ChunkMap, field: str, statements: list[dict],
                    plan: Any, ordered: bool) -> dict:
    """Target each statement (`plan(statement) -> shards`); a statement that cannot be targeted
    is a write error at its index, as mongos reports it (ordered: nothing after it runs)."""
    runs: list[tuple[str, list, list[int]]] = []
    failed: list[dict] = []
    for i, st in enumerate(statements):
        try:
            shards = plan(st)
        except CommandError as exc:
            failed.append(exc.to_write_error(i))
            if ordered:
                break
            continue
        runs.extend((shard, [st], [i]) for shard in shards)
    out = _write_runs(router, cmd, db, cmap, field, runs, ordered)
    if failed and not (ordered and out.get("writeErrors")):
        out["writeErrors"] = sorted(out.get("writeErrors", []) + failed, key=lambda e: e["index"])
    return out


def delete(router: Router, cmd: Mapping) -> dict:
    args = parse("delete", cmd)
    return _routed_writes(router, cmd, args, "deletes", args.deletes, _plan_delete)


def _plan_delete(router: Router, cmap: ChunkMap, st: dict) -> list[str]:
    q = st.get("q") or {}
    if st.get("limit"):
        return _single_target(router, cmap, q, "delete", False)
    return shards_of(target(q, cmap), cmap) if not st.get("collation") else cmap.shards()


def find_and_modify(router: Router, cmd: Mapping) -> dict:
    name = next(iter(cmd))
    args = parse(name, cmd)
    ns = f"{args.db}.{args.coll}"
    cmap = router.chunk_map(ns)
    if cmap is None:
        shard = router.primary_shard(args.db) or ""
        sub = for_shard(cmd)
        if retryable(cmd):
            sub.update(part_session(cmd, shard, 0))
        return _strip(_check_ok(router.shards.command(shard, args.db, sub)))
    query = args.query or {}

    def attempt(cmap: Optional[ChunkMap]) -> dict:
        assert cmap is not None
        if not full_key_equality(query, cmap):
            raise CommandError(ErrorCode.ShardKeyNotFound, "Query for sharded findAndModify must contain the shard key")
        if _touches_key(args.update, cmap):
            raise CommandError(ErrorCode.NotImplemented, "changing a document's shard key value is not "
                                                         "supported by the ginkgodb router")
        shard = shards_of(target(query, cmap), cmap)[0]
        sub = router.versioned(for_shard(cmd), cmap, shard)
        if retryable(cmd):
            sub.update(part_session(cmd, shard, 0))
        return _strip(_check_ok(router.shards.command(shard, args.db, sub)))
    return router.with_fresh_map(ns, attempt)


# -- count, distinct, aggregate --------------------------------------------------------------------
def count(router: Router, cmd: Mapping) -> dict:
    args = parse("count", cmd)
    ns = f"{args.db}.{args.coll}"

    def attempt(cmap: Optional[ChunkMap]) -> dict:
        shards = _targets(router, cmap, args.db, args.query, args.collation)
        if cmap is None:
            reply = router.shards.command(shards[0], args.db, for_shard(cmd))
            return {"n": _check_ok(reply)["n"]}
        sub = for_shard(cmd)
        skip, limit = int(args.skip or 0), abs(int(args.limit or 0))
        sub.pop("skip", None)
        sub.pop("limit", None)
        if limit:
            sub["limit"] = skip + limit
        total = 0
        for shard in shards:
            def owned(c: Mapping, shard: str = shard) -> dict:
                ids = owned_ids(router, cmap, shard, args.db, args.coll, args.query or {})
                return {**c, "query": restricted(args.query, ids)}
            reply, _ = ask(router, shard, args.db, sub, cmap, fallback=owned)
            total += int(_check_ok(reply)["n"])
        total = max(0, total - skip)
        return {"n": min(total, limit) if limit else total}
    return router.with_fresh_map(ns, attempt)


def distinct(router: Router, cmd: Mapping) -> dict:
    args = parse("distinct", cmd)
    ns = f"{args.db}.{args.coll}"
    from ..bsonutil.keycodec import encode_value

    def attempt(cmap: Optional[ChunkMap]) -> dict:
        shards = _targets(router, cmap, args.db, args.query, args.collation)
        if len(shards) > 1 and _collated(args.collation):
            raise CommandError(ErrorCode.NotImplemented, "distinct with a collation over several shards is not "
                                                         "supported by the ginkgodb router")
        seen: dict[bytes, Any] = {}
        for shard in shards:
            def owned(c: Mapping, shard: str = shard) -> dict:
                assert cmap is not None
                ids = owned_ids(router, cmap, shard, args.db, args.coll, args.query or {})
                return {**c, "query": restricted(args.query, ids)}
            reply, _ = ask(router, shard, args.db, for_shard(cmd), cmap, fallback=owned)
            for v in _check_ok(reply)["values"]:
                seen.setdefault(encode_value(v), v)
        return {"values": [seen[k] for k in sorted(seen)]}
    return router.with_fresh_map(ns, attempt)


def _referenced(stages: Any) -> list[tuple[Optional[str], str]]:
    """(db, collection) of every other collection a pipeline reads or writes."""
    out: list[tuple[Optional[str], str]] = []

    def walk(v: Any) -> None:
        if isinstance(v, Mapping):
            for k, x in v.items():
                if k in ("$lookup", "$graphLookup") and isinstance(x, Mapping):
                    if isinstance(x.get("from"), str):
                        out.append((None, x["from"]))
                    elif isinstance(x.get("from"), Mapping):
                        out.append((x["from"].get("db"), str(x["from"].get("coll"))))
                elif k == "$unionWith":
                    out.append((None, x if isinstance(x, str) else str(x.get("coll")) if isinstance(x, Mapping)
                                else ""))
                elif k in ("$out", "$merge"):
                    into = x.get("into", x) if isinstance(x, Mapping) and k == "$merge" else x
                    if isinstance(into, str):
                        out.append((None, into))
                    elif isinstance(into, Mapping):
                        out.append((into.get("db"), str(into.get("coll"))))
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(stages)
    return out


def aggregate(router: Router, cmd: Mapping) -> dict:
    args = parse("aggregate", cmd)
    pipeline = list(args.pipeline or [])
    for other_db, other in _referenced(pipeline):
        if router.chunk_map(f"{other_db or args.db}.{other}") is not None:
            raise CommandError(ErrorCode.NotImplemented, f"an aggregation reading or writing the sharded collection "
                               f"{other_db or args.db}.{other} is not supported by the ginkgodb router")
    if not isinstance(args.value, str):
        shard = router.primary_shard(args.db) or ""
        return _strip(_check_ok(router.shards.command(shard, args.db, for_shard(cmd))))
    ns = f"{args.db}.{args.coll}"
    if router.chunk_map(ns) is None:
        shard = router.primary_shard(args.db) or ""
        return _proxy_cursor(router, shard, args.db, args.coll, ns, for_shard(cmd), args)
    if args.explain:
        raise CommandError(ErrorCode.NotImplemented, "explain of an aggregation on a sharded collection is not "
                                                     "supported by the ginkgodb router")
    if _collated(args.collation):
        raise CommandError(ErrorCode.NotImplemented, "an aggregation with a collation on a sharded collection is "
                                                     "not supported by the ginkgodb router")
    if pipeline and next(iter(pipeline[0])) == "$planCacheStats":
        return _plan_cache_stats(router, cmd, args, ns, pipeline)
    # the shards run the leading $match stages (and a $sort after them): documents come back whole,
    # so the router can drop orphans by their shard key before the rest of the pipeline runs here
    split = 0
    while split < len(pipeline) and next(iter(pipeline[split])) == "$match":
        split += 1
    sort = None
    if split < len(pipeline) and next(iter(pipeline[split])) == "$sort":
        sort = pipeline[split]["$sort"]
        split += 1
    shard_part, router_part = pipeline[:split], pipeline[split:]
    _refuse_after_merge(router_part)
    match = pipeline[0].get("$match") if pipeline and "$match" in pipeline[0] else None
    # a first $group of mergeable accumulators runs partially on the shards (group_split.py)
    partial = None
    if sort is None and router_part and next(iter(router_part[0])) == "$group":
        found = split_group(router_part[0]["$group"])
        if found is not None:
            partial, merge_stages = found
            router_part = merge_stages + router_part[1:]

    def attempt(cmap: Optional[ChunkMap]) -> dict:
        assert cmap is not None
        shards = _targets(router, cmap, args.db, match, args.collation)
        sub = for_shard(cmd)
        sub["pipeline"] = shard_part + ([{"$group": partial}] if partial is not None else [])
        sub["cursor"] = {}
        parts, streams = [], []
        ctx = PipelineContext(db=args.db, variables=dict(args.let or {}), collection=args.coll)
        try:
            for shard in shards:
                # counting on no orphans when the shard groups; else whole documents, filtered here
                reply, orphans = ask(router, shard, args.db, sub, cmap, raw=True,
                                     fallback=lambda c: {**c, "pipeline": shard_part})
                _check_reply(reply)
                part = ShardCursor(router.shards, shard, args.db, args.coll, reply, 0)
                parts.append(part)
                owned = owned_only(part, cmap, shard) if partial is None or orphans else part
                if partial is not None and orphans:
                    owned = run_pipeline([{"$group": partial}], (_doc(d) for d in owned), ctx)
                streams.append(owned)
        except BaseException:
            for p in parts:
                p.kill()
            raise
        stream: Iterator[Any] = merge_streams(streams, sort)
        if router_part:
            stream = run_pipeline(router_part, (_doc(d) for d in stream), ctx)
        batch = (args.cursor or {}).get("batchSize") if isinstance(args.cursor, Mapping) else None
        return first_batch(router, ns, stream, parts, None if batch is None else int(batch))
    return router.with_fresh_map(ns, attempt)


def _refuse_after_merge(stages: list) -> None:
    """Stages the router cannot run over a merged stream: they read the engine or other collections."""
    for stage in stages:
        name = next(iter(stage))
        if name in ENGINE_STAGES or name in ("$lookup", "$graphLookup", "$unionWith", "$geoNear", "$search"):
            raise CommandError(ErrorCode.NotImplemented, f"{name} after the merge of a sharded aggregation is not "
                                                         "supported by the ginkgodb router")


def _plan_cache_stats(router: Router, cmd: Mapping, args: Any, ns: str, pipeline: list) -> dict:
    """mongos's `$planCacheStats` on a sharded collection: every shard's entries, each with its
    `shard`, then the rest of the pipeline on the router."""
    _refuse_after_merge(pipeline[1:])
    sub = for_shard(cmd)
    sub["pipeline"], sub["cursor"] = [pipeline[0]], {}
    entries: list[dict] = []
    for shard in router.shard_names():
        reply = _check_ok(router.shards.command(shard, args.db, sub, raw=True))
        for raw in ShardCursor(router.shards, shard, args.db, args.coll, reply, 0):
            entries.append({**_doc(raw), "shard": shard})
    stream: Iterator[Any] = iter(entries)
    if len(pipeline) > 1:
        ctx = PipelineContext(db=args.db, variables=dict(args.let or {}), collection=args.coll)
        stream = run_pipeline(pipeline[1:], stream, ctx)
    batch = (args.cursor or {}).get("batchSize") if isinstance(args.cursor, Mapping) else None
    return first_batch(router, ns, stream, [], None if batch is None else int(batch))


def _proxy_cursor(router: Router, shard: str, db: str, coll: str, ns: str, cmd: Mapping, args: Any) -> dict:
    reply = _check_ok(router.shards.command(shard, db, cmd, raw=True))
    if "cursor" not in reply:
        return _strip(dict(reply))
    part = ShardCursor(router.shards, shard, db, coll, reply, 0)
    batch = (args.cursor or {}).get("batchSize") if isinstance(args.cursor, Mapping) else None
    return first_batch(router, ns, iter(part), [part], None if batch is None else int(batch))
