"""create, drop, listCollections, renameCollection, collMod."""
from __future__ import annotations

from bson.raw_bson import RawBSONDocument

from ..engine import ddl
from ..engine.cursors import cursor_reply
from ..errors import CommandError, ErrorCode
from . import params as P
from .registry import command

_CREATE_FIELDS = frozenset({"capped", "size", "max", "validator", "validationLevel", "validationAction",
                            "collation", "viewOn", "pipeline", "timeseries", "expireAfterSeconds",
                            "clusteredIndex", "changeStreamPreAndPostImages", "storageEngine",
                            "indexOptionDefaults", "autoIndexId", "idIndex", "encryptedFields", "flags",
                            "temp", "recordPreImages"})
_NOT_YET = ("timeseries", "clusteredIndex", "encryptedFields")


def _create_options(cmd) -> dict:
    options = {}
    for key in cmd:
        if key in _CREATE_FIELDS:
            options[key] = P.plain(cmd[key])
    for key in _NOT_YET:
        if key in options:
            raise CommandError(ErrorCode.NotImplemented, f"create with '{key}' is not supported by ginkgodb yet")
    if options.get("capped"):
        size = options.get("size")
        if size is None:
            raise CommandError(ErrorCode.InvalidOptions, "the 'size' field is required when 'capped' is true")
        if not P.is_number(size) or size <= 0:
            raise CommandError(ErrorCode.BadValue, "size must be a positive number")
    level = options.get("validationLevel")
    if level is not None and level not in ("off", "strict", "moderate"):
        raise CommandError(ErrorCode.BadValue,
                           f"Enumeration value '{level}' for field 'validationLevel' is not a valid value.")
    action = options.get("validationAction")
    if action is not None and action not in ("error", "warn"):
        raise CommandError(ErrorCode.BadValue,
                           f"Enumeration value '{action}' for field 'validationAction' is not a valid value.")
    if "validator" in options:
        from ..query.match import compile_filter
        compile_filter(options["validator"])
    _check_view_options(options)
    return options


def _check_view_options(options: dict) -> None:
    if "pipeline" in options and "viewOn" not in options:
        raise CommandError(ErrorCode.BadValue, "'pipeline' requires 'viewOn' to also be specified")
    if "viewOn" not in options:
        return
    if not isinstance(options["viewOn"], str) or not options["viewOn"]:
        raise CommandError(ErrorCode.BadValue, "'viewOn' must be a non-empty string")
    pipeline = options.setdefault("pipeline", [])
    if not isinstance(pipeline, list) or not all(isinstance(s, dict) and len(s) == 1 for s in pipeline):
        raise CommandError(ErrorCode.BadValue, "'pipeline' must be an array of stage objects")
    for key in options:
        if key not in ("viewOn", "pipeline", "collation"):
            raise CommandError(ErrorCode.InvalidOptions, f"option '{key}' is not supported on a view")


@command("create", help="Create a collection with options.", write=True)
def create(ctx, cmd) -> dict:
    P.check_unknown(cmd, _CREATE_FIELDS)
    db = P.database(cmd)
    name = cmd["create"]
    if not isinstance(name, str):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field 'create.create' is the wrong type, expected type 'string'")
    options = _create_options(cmd)
    with ctx.engine.write() as batch:
        ddl.create_collection(batch, db, name, options)
    return {}


@command("drop", help="Drop a collection and its indexes.", write=True)
def drop(ctx, cmd) -> dict:
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    engine = ctx.engine
    with engine.write() as batch:
        meta = batch.catalog.get(db, coll)
        if meta is None:
            return {}
        was = ddl.drop_collection(batch, meta)
    return {"nIndexesWas": was, "ns": f"{db}.{coll}"}


def collection_info(meta, name_only: bool) -> dict:
    kind = "view" if "viewOn" in meta.options else "collection"
    if name_only:
        return {"name": meta.name, "type": kind}
    if kind == "view":
        return {"name": meta.name, "type": "view", "options": dict(meta.options), "info": {"readOnly": True}}
    return {"name": meta.name, "type": "collection", "options": dict(meta.options),
            "info": {"readOnly": False, "uuid": meta.uuid},
            "idIndex": {"v": 2, "key": {"_id": 1}, "name": "_id_"}}


@command("listCollections", help="Collections of a database, as a cursor.")
def list_collections(ctx, cmd) -> dict:
    P.check_unknown(cmd, frozenset({"filter", "nameOnly", "authorizedCollections", "cursor", "includePendingDrops"}))
    db = P.database(cmd)
    filt = P.get_doc(cmd, "filter") or None
    name_only = P.get_bool(cmd, "nameOnly")
    infos = [collection_info(m, False) for m in ctx.engine.catalog.in_db(db)]
    if filt:
        from ..query.match import compile_filter
        matcher = compile_filter(filt)
        infos = [i for i in infos if matcher(i)]
    if name_only:
        infos = [{"name": i["name"], "type": i["type"]} for i in infos]
    return cursor_reply(0, f"{db}.$cmd.listCollections", infos, True)


@command("renameCollection", help="Rename a collection (optionally across databases).", admin_only=True,
         write=True)
def rename_collection(ctx, cmd) -> dict:
    P.check_unknown(cmd, frozenset({"to", "dropTarget", "stayTemp"}))
    source, target = cmd.get("renameCollection"), cmd.get("to")
    if not isinstance(source, str) or not isinstance(target, str):
        raise CommandError(ErrorCode.TypeMismatch, "'renameCollection' and 'to' must be strings")
    src_db, _, src_coll = source.partition(".")
    dst_db, _, dst_coll = target.partition(".")
    if not src_coll or not dst_coll:
        raise CommandError(ErrorCode.InvalidNamespace, f"Invalid target namespace: {target}")
    if source == target:
        raise CommandError(ErrorCode.IllegalOperation, "Can't rename a collection to itself")
    engine = ctx.engine
    with engine.write() as batch:
        meta = batch.catalog.get(src_db, src_coll)
        if meta is None:
            raise CommandError(ErrorCode.NamespaceNotFound, f"Source collection {source} does not exist")
        ddl.rename_collection(batch, meta, dst_db, dst_coll, P.get_bool(cmd, "dropTarget"))
    return {}


@command("collMod", help="Change collection options (validator, index options).", write=True)
def coll_mod(ctx, cmd) -> dict:
    P.check_unknown(cmd, frozenset({"validator", "validationLevel", "validationAction", "index",
                                    "expireAfterSeconds", "changeStreamPreAndPostImages", "dryRun"}))
    db = P.database(cmd)
    coll = P.collection(cmd, db)
    engine = ctx.engine
    with engine.write() as batch:
        meta = batch.catalog.get(db, coll)
        if meta is None:
            raise CommandError(ErrorCode.NamespaceNotFound, f"ns does not exist: {db}.{coll}")
        options = _create_options({k: v for k, v in cmd.items()
                                   if k in ("validator", "validationLevel", "validationAction")})
        indexes, reply = _mod_index(meta, P.get_doc(cmd, "index"))
        ddl.modify_collection(batch, meta, options, indexes)
    return reply


def _mod_index(meta, spec) -> tuple:
    if not spec:
        return None, {}
    target = spec.get("keyPattern", spec.get("name"))
    from ..engine.indexes import find_index
    ix = find_index(list(meta.indexes), P.plain(target))
    if ix is None:
        raise CommandError(ErrorCode.IndexNotFound, f"cannot find index {target} for ns {meta.ns}")
    reply = {}
    options = dict(ix.options)
    for option in ("hidden", "expireAfterSeconds"):
        if option in spec:
            reply[f"{option}_old"] = ix.options.get(option, False if option == "hidden" else None)
            options[option] = spec[option]
            reply[f"{option}_new"] = spec[option]
    changed = ix.evolve(options=options)
    return [changed if i is ix else i for i in meta.indexes], reply
