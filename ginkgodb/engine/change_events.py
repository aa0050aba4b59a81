"""Oplog entries -> change events, as mongod 7.0's ChangeStreamDefaultEventTransformation.

`StreamScope` says which entries a stream sees (mongod's oplog filter per stream kind) and which
events invalidate it; `events_of` unwinds one decoded entry into `Event`s; `Event.document`
assembles the event in mongod's field order once its images are known; `update_description`
parses a `$v: 2` diff as mongod's change_stream_document_diff_parser.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from .resume_tokens import ResumeToken

INTERNAL_DBS = ("admin", "config", "local")
EXPANDED_ONLY = frozenset({"create", "createIndexes", "dropIndexes", "modify"})
#: operations whose pre-image change streams may return, and the one with a computed post-image
PRE_IMAGE_OPS = frozenset({"update", "replace", "delete"})


@dataclass(frozen=True)
class StreamScope:
    """A stream's kind ("collection", "database", "cluster"), namespace and options."""

    kind: str
    db: str
    coll: Optional[str] = None
    show_expanded: bool = False

    def watches(self, db: str, coll: str) -> bool:
        if self.kind == "collection":
            return db == self.db and coll == self.coll
        if coll.startswith("system."):
            return False
        if self.kind == "database":
            return db == self.db
        return db not in INTERNAL_DBS

    def sees_commands_of(self, db: str) -> bool:
        """Commands are entries on `<db>.$cmd`: the stream's database (any user database for the
        deployment)."""
        return db == self.db if self.kind != "cluster" else db not in INTERNAL_DBS

    def invalidated_by(self, event: Event) -> bool:
        if self.kind == "collection":
            return event.operation in ("drop", "rename", "dropDatabase")
        if self.kind == "database":
            return event.operation == "dropDatabase"
        return False


class Event:
    """One change event before its images: the fields mongod sets from the oplog, the token, and
    what the image stages need."""

    __slots__ = ("operation", "token", "ts", "wall", "uuid", "ns", "to", "txn", "full_document",
                 "document_key", "update_description", "operation_description",
                 "state_before_change", "diff", "image_key", "invalidate")

    def __init__(self, operation: str, token: ResumeToken, ts: Any, wall: Any) -> None:
        self.operation = operation
        self.token = token
        self.ts, self.wall = ts, wall
        self.uuid: Any = None
        self.ns: Optional[dict] = None
        self.to: Optional[dict] = None
        self.txn: Optional[tuple] = None            # (txnNumber, lsid)
        self.full_document: Any = None
        self.document_key: Any = None
        self.update_description: Any = None
        self.operation_description: Any = None
        self.state_before_change: Any = None
        self.diff: Any = None                       # the update's decoded diff (post-images)
        self.image_key: Optional[tuple] = None      # (ts, applyOpsIndex) of its pre-image
        self.invalidate = False

    def document(self, scope: StreamScope, full_document: Any = ..., before: Any = ...) -> dict:
        """The event in mongod 7.0's field order; `...` leaves an image out."""
        out: dict = {}
        if self.to is not None:
            out["to"] = self.to
        if self.txn is not None:
            out["txnNumber"], out["lsid"] = self.txn
        out["_id"] = self.token.to_document()
        out["operationType"] = self.operation
        out["clusterTime"] = self.ts
        if scope.show_expanded and self.uuid is not None and not self.invalidate:
            out["collectionUUID"] = self.uuid
        out["wallTime"] = self.wall
        if self.invalidate:
            return out
        if full_document is not ...:
            out["fullDocument"] = full_document
        elif self.full_document is not None:
            out["fullDocument"] = self.full_document
        if self.ns is not None:
            out["ns"] = self.ns
        if self.document_key is not None:
            out["documentKey"] = self.document_key
        if scope.show_expanded and self.operation_description is not None:
            out["operationDescription"] = self.operation_description
        if self.update_description is not None:
            desc = dict(self.update_description)
            if not scope.show_expanded:
                desc.pop("disambiguatedPaths", None)
            out["updateDescription"] = desc
        if self.state_before_change is not None:
            out["stateBeforeChange"] = self.state_before_change
        if before is not ...:
            out["fullDocumentBeforeChange"] = before
        return out


def _ns(db: str, coll: Optional[str] = None) -> dict:
    return {"db": db} if coll is None else {"db": db, "coll": coll}


def _token(ts: Any, index: int, uuid: Any, operation: str, document_key: Any) -> ResumeToken:
    event_id: dict = {"operationType": operation}
    if document_key is not None:
        event_id["documentKey"] = document_key
    return ResumeToken(ts, txn_op_index=index, uuid=uuid, event_id=event_id)


def events_of(entry: dict, scope: StreamScope) -> list[Event]:
    """The stream's events of one oplog entry (several for a transaction), invalidate included."""
    op = entry.get("op")
    if op == "n":
        return []
    o = entry.get("o") or {}
    if op == "c" and isinstance(o.get("applyOps"), list):
        return _transaction_events(entry, o["applyOps"], scope)
    event = _event(entry, scope, entry["ts"], 0)
    if event is None:
        return []
    event.image_key = (entry["ts"], 0)
    return _with_invalidate(event, scope)


def _with_invalidate(event: Event, scope: StreamScope) -> list[Event]:
    if not scope.invalidated_by(event):
        return [event]
    inv = Event("invalidate", event.token.invalidating(), event.ts, event.wall)
    inv.invalidate = True
    return [event, inv]


def _transaction_events(entry: dict, ops: list, scope: StreamScope) -> list[Event]:
    txn = (entry.get("txnNumber"), entry.get("lsid"))
    out: list[Event] = []
    for index, inner in enumerate(ops):
        inner_entry = {**inner, "ts": entry["ts"], "wall": entry.get("wall")}
        event = _event(inner_entry, scope, entry["ts"], index, in_transaction=True)
        if event is None:
            continue
        if "txnNumber" in entry or "lsid" in entry:
            event.txn = txn
        event.image_key = (entry["ts"], index)
        out.extend(_with_invalidate(event, scope))
    return out


def _event(entry: dict, scope: StreamScope, ts: Any, index: int, in_transaction: bool = False
           ) -> Optional[Event]:
    op = entry.get("op")
    ns = entry.get("ns", "")
    db, _, coll = ns.partition(".")
    o = entry.get("o") or {}
    uuid = entry.get("ui")
    wall = entry.get("wall")
    if op in ("i", "u", "d"):
        if not scope.watches(db, coll):
            return None
        if op == "i":
            key = entry.get("o2") or {"_id": o.get("_id")}
            event = Event("insert", _token(ts, index, uuid, "insert", key), ts, wall)
            event.full_document = o
        elif op == "u" and o.get("$v") == 2 and isinstance(o.get("diff"), dict):
            key = entry.get("o2")
            event = Event("update", _token(ts, index, uuid, "update", key), ts, wall)
            event.update_description = update_description(o["diff"])
            event.diff = o["diff"]
        elif op == "u":
            key = entry.get("o2")
            event = Event("replace", _token(ts, index, uuid, "replace", key), ts, wall)
            event.full_document = o
        else:
            key = o
            event = Event("delete", _token(ts, index, uuid, "delete", key), ts, wall)
        event.uuid, event.ns, event.document_key = uuid, _ns(db, coll), key
        return event
    if op != "c" or coll != "$cmd" or not scope.sees_commands_of(db):
        return None
    return _command_event(entry, o, db, uuid, ts, index, wall, scope)


def _command_event(entry: dict, o: dict, db: str, uuid: Any, ts: Any, index: int, wall: Any,
                   scope: StreamScope) -> Optional[Event]:
    description: Any = None
    before: Any = None
    to: Optional[dict] = None
    if "drop" in o:
        operation, target = "drop", o["drop"]
        if not scope.watches(db, target):
            return None
        if "viewOn" in (entry.get("o2") or {}) and not scope.show_expanded:
            return None   # a view's definition going away: an expanded event only
        ns = _ns(db, target)
    elif "renameCollection" in o:
        operation = "rename"
        src_db, _, src = str(o["renameCollection"]).partition(".")
        dst_db, _, dst = str(o.get("to", "")).partition(".")
        if not (scope.watches(src_db, src) or scope.watches(dst_db, dst)):
            return None
        ns, to = _ns(src_db, src), _ns(dst_db, dst)
        description = {k: v for k, v in o.items() if k not in ("renameCollection", "stayTemp")}
        description["to"] = to
    elif "dropDatabase" in o:
        if scope.kind == "collection":
            return None
        operation, ns = "dropDatabase", _ns(db)
    else:
        found = next(((field, name) for field, name in (("create", "create"), ("createIndexes", "createIndexes"),
                                                         ("dropIndexes", "dropIndexes"), ("collMod", "modify"))
                      if field in o), None)
        if found is None:
            return None
        field, operation = found
        target = o[field]
        if not scope.show_expanded or not scope.watches(db, target):
            return None
        ns = _ns(db, target)
        if operation == "create":
            description = {k: v for k, v in o.items() if k != "create"}
        elif operation == "createIndexes":
            description = {"indexes": [{k: v for k, v in o.items() if k != "createIndexes"}]}
        elif operation == "dropIndexes":
            description = {"indexes": [{k: v for k, v in (entry.get("o2") or {}).items() if k != "dropIndexes"}]}
        else:
            description = {k: v for k, v in o.items() if k != "collMod"}
            o2 = entry.get("o2") or {}
            before = {k: v for k, v in (("collectionOptions", o2.get("collectionOptions_old")),
                                        ("indexOptions", o2.get("indexOptions_old"))) if v is not None}
    event = Event(operation, _token(ts, index, uuid, operation, None), ts, wall)
    event.uuid = uuid if operation != "dropDatabase" else None
    event.ns, event.to = ns, to
    event.operation_description = description
    event.state_before_change = before
    return event


# ------------------------------------------------------------------------------ update descriptions
def update_description(diff: dict) -> dict:
    """{updatedFields, removedFields, truncatedArrays, disambiguatedPaths} of a `$v: 2` diff."""
    builder = _Description()
    builder.document(diff, [])
    return {"updatedFields": builder.updated, "removedFields": builder.removed,
            "truncatedArrays": builder.truncated, "disambiguatedPaths": builder.disambiguated}


class _Description:
    def __init__(self) -> None:
        self.updated: dict = {}
        self.removed: list = []
        self.truncated: list = []
        self.disambiguated: dict = {}

    def _dotted(self, path: list) -> str:
        return ".".join(str(part) for part, _ in path)

    def _note(self, path: list) -> None:
        """Record the path in disambiguatedPaths when a field in it is numeric or dotted."""
        ambiguous = False
        for position, (part, is_index) in enumerate(path):
            if is_index:
                continue
            numeric = part.isascii() and part.isdigit() and (len(part) == 1 or part[0] != "0")
            if (position > 0 and numeric) or "." in part:
                ambiguous = True
                break
        if ambiguous:
            self.disambiguated[self._dotted(path)] = [part for part, _ in path]

    def document(self, diff: dict, path: list) -> None:
        for section in ("u", "i"):
            for name, value in (diff.get(section) or {}).items():
                here = path + [(name, False)]
                self.updated[self._dotted(here)] = value
                self._note(here)
        for name in (diff.get("d") or {}):
            here = path + [(name, False)]
            self.removed.append(self._dotted(here))
            self._note(here)
        for key, sub in diff.items():
            if key[:1] != "s":
                continue
            here = path + [(key[1:], False)]
            if isinstance(sub, dict) and sub.get("a") is True:
                self.array(sub, here)
            elif isinstance(sub, dict):
                self.document(sub, here)

    def array(self, diff: dict, path: list) -> None:
        if "l" in diff:
            self.truncated.append({"field": self._dotted(path), "newSize": int(diff["l"])})
            self._note(path)
        for key, value in diff.items():
            if key in ("a", "l"):
                continue
            here = path + [(int(key[1:]), True)]
            if key[0] == "u":
                self.updated[self._dotted(here)] = value
                self._note(here)
            elif isinstance(value, dict) and value.get("a") is True:
                self.array(value, here)
            elif isinstance(value, dict):
                self.document(value, here)
