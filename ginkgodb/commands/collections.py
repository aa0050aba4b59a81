"""create, drop, listCollections, renameCollection, collMod."""
from __future__ import annotations

from ..bsonutil.types import type_name
from ..engine import IndexChange
from ..errors import CommandError, ErrorCode
from . import fields as P
from .clustered_options import check_clustered_options
from .coll_mod_options import capped_changes, check_unique_request, clustered_ttl
from .context import CommandContext
from .declare import (
    Args,
    Target,
    boolean,
    command,
    doc,
    ignored,
    on_cluster,
    on_collection,
    on_database,
    unimplemented,
    value,
)
from .replies import cursor_reply
from .server_parameters import test_commands_enabled

_CREATE_FIELDS = frozenset({"capped", "size", "max", "validator", "validationLevel", "validationAction",
                            "collation", "viewOn", "pipeline", "timeseries", "expireAfterSeconds",
                            "clusteredIndex", "changeStreamPreAndPostImages", "storageEngine",
                            "indexOptionDefaults", "autoIndexId", "idIndex", "encryptedFields", "flags",
                            "temp", "recordPreImages"})
_NOT_YET = ("encryptedFields",)


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
        compile_filter(options["validator"], where=False)
    if "changeStreamPreAndPostImages" in options:
        _check_pre_and_post_images(options["changeStreamPreAndPostImages"])
    _check_view_options(options)
    check_clustered_options(options, test_commands_enabled())
    return options


def _check_pre_and_post_images(value) -> None:
    """`{enabled: <bool>}`: whether the collection keeps pre-images for change streams."""
    field = "changeStreamPreAndPostImages"
    if not isinstance(value, dict):
        raise CommandError(ErrorCode.TypeMismatch, f"BSON field '{field}' is the wrong type "
                                                   f"'{type_name(value)}', expected type 'object'")
    for key in value:
        if key != "enabled":
            raise CommandError(ErrorCode.IDLUnknownField, f"BSON field '{field}.{key}' is an unknown field.")
    if "enabled" not in value:
        raise CommandError(ErrorCode.IDLFailedToParse,
                           f"BSON field '{field}.enabled' is missing but a required field")
    if not isinstance(value["enabled"], bool):
        raise CommandError(ErrorCode.TypeMismatch, f"BSON field '{field}.enabled' is the wrong type "
                                                   f"'{type_name(value['enabled'])}', expected type 'bool'")


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


_CREATE = tuple(value(name) for name in sorted(_CREATE_FIELDS))


@command("create", help="Create a collection with options.", fields=_CREATE, write=True, write_concern=True,
         api_version_1=True, privileges=(on_database("createCollection"),))
def create(ctx: CommandContext, args: Args) -> dict:
    name = args.value
    if not isinstance(name, str):
        raise CommandError(ErrorCode.TypeMismatch,
                           "BSON field 'create.create' is the wrong type, expected type 'string'")
    ctx.engine.create_collection(args.db, name, _create_options(args.cmd))
    return {}


@command("drop", help="Drop a collection and its indexes.", target=Target.COLLECTION, write=True,
         write_concern=True, api_version_1=True, privileges=(on_collection("dropCollection"),))
def drop(ctx: CommandContext, args: Args) -> dict:
    was = ctx.engine.drop_collection(args.db, args.coll)
    return {} if was is None else {"nIndexesWas": was, "ns": f"{args.db}.{args.coll}"}


def collection_info(meta, name_only: bool, engine=None) -> dict:
    series = engine.timeseries_info(meta, name_only) if engine is not None else None
    if series is not None:  # a time-series namespace (engine/timeseries)
        return series
    kind = "view" if "viewOn" in meta.options else "collection"
    if name_only:
        return {"name": meta.name, "type": kind}
    if kind == "view":
        return {"name": meta.name, "type": "view", "options": dict(meta.options), "info": {"readOnly": True}}
    info = {"name": meta.name, "type": "collection", "options": dict(meta.options),
            "info": {"readOnly": False, "uuid": meta.uuid}}
    if "clusteredIndex" not in meta.options:   # a clustered collection has no _id index
        info["idIndex"] = {"v": 2, "key": {"_id": 1}, "name": "_id_"}
    return info


@command("listCollections", help="Collections of a database, as a cursor.",
         fields=(doc("filter"), boolean("nameOnly"), boolean("authorizedCollections"), value("cursor"),
                 ignored("includePendingDrops", "drops are never pending")),
         api_version_1=True, privileges=(on_database("listCollections"),))
def list_collections(ctx: CommandContext, args: Args) -> dict:
    infos = [collection_info(m, False, ctx.engine) for m in ctx.engine.collections_of(args.db)]
    if args.filter:
        from ..query.match import compile_filter
        matcher = compile_filter(args.filter, where=False)
        infos = [i for i in infos if matcher(i)]
    if args.name_only:
        infos = [{"name": i["name"], "type": i["type"]} for i in infos]
    return cursor_reply(0, f"{args.db}.$cmd.listCollections", infos, True)


@command("renameCollection", help="Rename a collection (optionally across databases).", admin_only=True,
         fields=(value("to"), boolean("dropTarget"), ignored("stayTemp", "no collection is temporary")),
         write=True, write_concern=True, privileges=(on_cluster("renameCollection"),))
def rename_collection(ctx: CommandContext, args: Args) -> dict:
    source, target = args.value, args.to
    if not isinstance(source, str) or not isinstance(target, str):
        raise CommandError(ErrorCode.TypeMismatch, "'renameCollection' and 'to' must be strings")
    src_db, _, src_coll = source.partition(".")
    dst_db, _, dst_coll = target.partition(".")
    if not src_coll or not dst_coll:
        raise CommandError(ErrorCode.InvalidNamespace, f"Invalid target namespace: {target}")
    if source == target:
        raise CommandError(ErrorCode.IllegalOperation, "Can't rename a collection to itself")
    ctx.engine.rename_collection(src_db, src_coll, dst_db, dst_coll, args.drop_target)
    return {}


@command("collMod", help="Change collection options (validator, index options).",
         fields=(value("validator"), value("validationLevel"), value("validationAction"), doc("index"),
                 value("viewOn"), value("pipeline"),
                 value("expireAfterSeconds"), value("cappedSize"), value("cappedMax"),
                 value("changeStreamPreAndPostImages"), value("timeseries"),
                 unimplemented("dryRun")),
         target=Target.COLLECTION, write=True, write_concern=True, api_version_1=True,
         privileges=(on_collection("collMod"),))
def coll_mod(ctx: CommandContext, args: Args) -> dict:
    entry = ctx.engine.collection_entry(args.db, args.coll)
    if "timeseries" in args.cmd:  # granularity of a time-series collection (engine/timeseries)
        return ctx.engine.modify_timeseries(args.db, args.coll, P.plain(args.timeseries))
    if entry is not None and "viewOn" in entry.options:
        return ctx.engine.modify_collection(args.db, args.coll, _view_changes(args))
    for key in ("viewOn", "pipeline"):
        if key in args.cmd:
            raise CommandError(ErrorCode.InvalidOptions, f"'{key}' option only supported on a view")
    options = _create_options({k: v for k, v in args.cmd.items()
                               if k in ("validator", "validationLevel", "validationAction",
                                        "changeStreamPreAndPostImages")})
    options.update(capped_changes(entry.options if entry is not None else {}, args.cmd))
    if "expireAfterSeconds" in args.cmd:   # a clustered collection's TTL (coll_mod_options.py)
        ttl = clustered_ttl(entry.options if entry is not None else {}, args.expire_after_seconds)
    index = None
    if args.index:
        spec = args.index
        for key in spec:
            if key not in ("keyPattern", "name", "hidden", "expireAfterSeconds", "prepareUnique", "unique"):
                raise CommandError(ErrorCode.IDLUnknownField,
                                   f"BSON field 'collMod.index.{key}' is an unknown field.")
        check_unique_request(spec)
        index = IndexChange(P.plain(spec.get("keyPattern", spec.get("name"))),
                            {k: v for k, v in spec.items()
                             if k in ("hidden", "expireAfterSeconds", "prepareUnique", "unique")})
    reply = ctx.engine.modify_collection(args.db, args.coll, options, index)
    if "expireAfterSeconds" in args.cmd:   # checked above: applied once the rest has been
        ctx.engine.set_clustered_ttl(args.db, args.coll, ttl)
    return reply


def _view_changes(args: Args) -> dict:
    """collMod of a view: a new `viewOn` and/or `pipeline` (the engine refuses cycles)."""
    for key in ("validator", "validationLevel", "validationAction", "index"):
        if key in args.cmd:
            raise CommandError(ErrorCode.InvalidOptions, f"option not supported on a view: {key}")
    changes: dict = {}
    if "viewOn" in args.cmd:
        if not isinstance(args.view_on, str):
            raise CommandError(ErrorCode.InvalidOptions, "'viewOn' option must be a string")
        changes["viewOn"] = args.view_on
    if "pipeline" in args.cmd:
        pipeline = args.pipeline
        if not isinstance(pipeline, list) or not all(isinstance(st, dict) and len(st) == 1 for st in pipeline):
            raise CommandError(ErrorCode.InvalidOptions, "not a valid aggregation pipeline")
        changes["pipeline"] = pipeline
    return changes
