"""Collection: pymongo's collection API over command documents.

Each method validates its arguments as pymongo does, builds the command pymongo would send,
runs it through the client's CommandRunner and turns the reply into pymongo's result objects
and exceptions. No query semantics live here: the engine does all of that.
"""
from __future__ import annotations

import warnings
from collections import abc
from itertools import repeat
from typing import Any, Optional

from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument
from pymongo.collation import validate_collation_or_none
from pymongo.collection import Collection as PymongoCollection
from pymongo.collection import ReturnDocument
from pymongo.errors import ConfigurationError
from pymongo.results import BulkWriteResult, DeleteResult, InsertManyResult, InsertOneResult, UpdateResult

from . import keys, lean
from .aggregation import aggregate
from .base import SettingsHolder
from .bulk import Bulk
from .codec import (
    codec_settings,
    decode_document,
    decode_value,
    encode_insert,
    plain_reply,
    wire_value,
)
from .collection_admin import CollectionAdmin
from .command_cursor import CommandCursor
from .cursor import Cursor
from .plain import is_utf8
from .pymongo_base import hide_inherited
from .raising import check_write_reply
from .raw_batch import RawBatchCommandCursor, RawBatchCursor
from .validation import (
    all_raw_documents,
    check_collection_name,
    validate_boolean,
    validate_is_document_type,
    validate_is_mapping,
    validate_list,
    validate_list_or_none,
    validate_ok_for_replace,
    validate_ok_for_update,
)


@hide_inherited
class Collection(CollectionAdmin, SettingsHolder, PymongoCollection):
    """A collection of one database (pymongo.collection.Collection's API).

    A subclass of pymongo's Collection only so that `isinstance` checks (pymongo's `gridfs`)
    accept it: pymongo's `__init__` never runs and every method is ours.
    """

    def __init__(self, database: Any, name: str, create: Optional[bool] = False,
                 codec_options: Any = None, read_preference: Any = None,
                 write_concern: Any = None, read_concern: Any = None, session: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(*database._settings_or_own(codec_options, read_preference,
                                                    write_concern, read_concern))
        check_collection_name(name)
        self._database = database
        self._name = name
        self._dbname = database.name
        self._full_name = f"{self._dbname}.{name}"
        self._runner = database.client._runner
        settings = codec_settings(self._codec_options)
        self._decoder = settings.decoder
        self._batch_decoder = settings.batch_decoder
        self._plain = settings.plain and is_utf8(name)   # may skip the BSON round trip
        self._write_response_codec_options = settings.reply_options
        if create or kwargs:
            warnings.warn("The `create` and `kwargs` arguments to Collection are deprecated and "
                          "will be removed in PyMongo 5.0", DeprecationWarning, stacklevel=2)
            self._create(kwargs, session)

    # ------------------------------------------------------------------ identity
    def __getattr__(self, name: str) -> Collection:
        if name.startswith("_"):
            full_name = f"{self._name}.{name}"
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}. To access the "
                                 f"{full_name} collection, use database['{full_name}'].")
        return self.__getitem__(name)

    def __getitem__(self, name: str) -> Collection:
        return Collection(self._database, f"{self._name}.{name}", False, self.codec_options,
                          self.read_preference, self.write_concern, self.read_concern)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._database!r}, {self._name!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Collection):
            return self._database == other.database and self._name == other.name
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((self._database, self._name))

    def __bool__(self) -> bool:
        raise NotImplementedError(f"{type(self).__name__} objects do not implement truth value "
                                  "testing or bool(). Please compare with None instead: "
                                  "collection is not None")

    __iter__ = None

    def __next__(self) -> Any:
        raise TypeError("'Collection' object is not iterable")

    next = __next__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if "." not in self._name:
            raise TypeError(f"'{type(self).__name__}' object is not callable. If you meant to call "
                            f"the '{self._name}' method on a 'Database' object it is failing "
                            "because no such method exists.")
        raise TypeError(f"'{type(self).__name__}' object is not callable. If you meant to call "
                        f"the '{self._name.split('.')[-1]}' method on a 'Collection' object it is "
                        "failing because no such method exists.")

    @property
    def full_name(self) -> str:
        return self._full_name

    @property
    def name(self) -> str:
        return self._name

    @property
    def database(self) -> Any:
        return self._database

    def with_options(self, codec_options: Any = None, read_preference: Any = None,
                     write_concern: Any = None, read_concern: Any = None) -> Collection:
        return Collection(self._database, self._name, False,
                          *self._settings_or_own(codec_options, read_preference, write_concern,
                                                 read_concern))

    def _run(self, cmd: dict, **kwargs: Any) -> Any:
        return self._runner.run(self._dbname, cmd, codec_options=self._codec_options, **kwargs)

    def _write_reply(self, reply: Any) -> dict:
        """A write command's reply decoded (a copy) and checked for write errors."""
        result = plain_reply(reply, self._write_response_codec_options)
        if result is reply:     # flat, so no writeErrors or writeConcernError in it
            return dict(reply)
        result = dict(result)
        check_write_reply(result)
        return result

    # ------------------------------------------------------------------ inserts
    def insert_one(self, document: Any, bypass_document_validation: Optional[bool] = None,
                   session: Any = None, comment: Any = None) -> InsertOneResult:
        validate_is_document_type("document", document)
        raw = type(document) is not dict and isinstance(document, RawBSONDocument)
        if not (raw or "_id" in document):
            document["_id"] = ObjectId()
        write_concern = self._write_concern_for(session)
        cmd: dict = {"insert": self._name, "ordered": True,
                     "documents": [encode_insert(document, self._codec_options)]}
        if comment is not None:
            cmd["comment"] = wire_value(comment, self._codec_options)
        if bypass_document_validation is not None:
            cmd["bypassDocumentValidation"] = bypass_document_validation
        reply = self._run(cmd, session=session, write_concern=write_concern, encoded=True)
        if "writeErrors" in reply or "writeConcernError" in reply:
            self._write_reply(reply)
        return InsertOneResult(None if raw else document.get("_id"), write_concern.acknowledged)

    def insert_many(self, documents: Any, ordered: bool = True,
                    bypass_document_validation: Optional[bool] = None, session: Any = None,
                    comment: Any = None) -> InsertManyResult:
        if (not isinstance(documents, abc.Iterable) or isinstance(documents, abc.Mapping)
                or not documents):
            raise TypeError("documents must be a non-empty list")
        inserted_ids: list = []
        blk = Bulk(self, ordered, bypass_document_validation, comment=comment)
        ops = blk.ops
        if type(documents) is list and all_raw_documents(documents):
            # bytes to insert as they are: no check or `_id` to add per document
            ops.extend(zip(repeat(0), documents))
            documents = ()
        for document in documents:
            if type(document) is not dict:
                validate_is_document_type("document", document)
                if isinstance(document, RawBSONDocument):
                    ops.append((0, document))
                    continue
            if "_id" not in document:
                document["_id"] = ObjectId()
            inserted_ids.append(document["_id"])
            ops.append((0, document))
        write_concern = self._write_concern_for(session)
        blk.execute(write_concern, session)
        return InsertManyResult(inserted_ids, write_concern.acknowledged)

    def bulk_write(self, requests: Any, ordered: bool = True,
                   bypass_document_validation: Optional[bool] = None, session: Any = None,
                   comment: Any = None, let: Any = None) -> BulkWriteResult:
        validate_list("requests", requests)
        blk = Bulk(self, ordered, bypass_document_validation, comment=comment, let=let)
        for request in requests:
            try:
                request._add_to_bulk(blk)
            except AttributeError:
                raise TypeError(f"{request!r} is not a valid request") from None
        result = blk.execute(self._write_concern_for(session), session)
        if result is not None:
            return BulkWriteResult(result, True)
        return BulkWriteResult({}, False)

    # ------------------------------------------------------------------ updates and deletes
    def _update(self, criteria: Any, document: Any, upsert: bool = False, multi: bool = False,
                bypass_doc_val: Optional[bool] = None, collation: Any = None,
                array_filters: Any = None, hint: Any = None, session: Any = None,
                let: Any = None, sort: Any = None, comment: Any = None) -> Optional[dict]:
        validate_boolean("upsert", upsert)
        if (session is None and collation is None and array_filters is None and hint is None
                and let is None and sort is None and comment is None and bypass_doc_val is None
                and self._plain):
            return lean.update(self, criteria, document, upsert, multi)
        collation = validate_collation_or_none(collation)
        write_concern = self._write_concern_for(session)
        acknowledged = write_concern.acknowledged
        stmt: dict = {"q": criteria, "u": document, "multi": multi, "upsert": upsert}
        if collation is not None:
            _require_acknowledged(acknowledged, "Collation")
            stmt["collation"] = collation
        if array_filters is not None:
            _require_acknowledged(acknowledged, "arrayFilters")
            stmt["arrayFilters"] = array_filters
        if hint is not None:
            stmt["hint"] = keys.hint_document(hint)
        if sort is not None:
            if not acknowledged:
                raise ConfigurationError("Must be connected to MongoDB 8.0+ to use sort on "
                                         "unacknowledged update commands.")
            validate_is_mapping("sort", sort)
            stmt["sort"] = sort
        cmd: dict = {"update": self._name, "ordered": True, "updates": [stmt]}
        if let is not None:
            validate_is_mapping("let", let)
            cmd["let"] = let
        if comment is not None:
            cmd["comment"] = comment
        if bypass_doc_val is not None:
            cmd["bypassDocumentValidation"] = bypass_doc_val
        result = self._write_reply(self._run(cmd, session=session, write_concern=write_concern))
        return self._update_result(result, acknowledged)

    @staticmethod
    def _update_result(result: dict, acknowledged: bool) -> Optional[dict]:
        """An update reply in the shape pymongo's UpdateResult.raw_result has."""
        if result.get("n") and "upserted" not in result:
            result["updatedExisting"] = True
        else:
            result["updatedExisting"] = False
            if "upserted" in result:
                result["upserted"] = result["upserted"][0]["_id"]
        return result if acknowledged else None

    def replace_one(self, filter: Any, replacement: Any, upsert: bool = False,
                    bypass_document_validation: Optional[bool] = None, collation: Any = None,
                    hint: Any = None, session: Any = None, let: Any = None, sort: Any = None,
                    comment: Any = None) -> UpdateResult:
        validate_is_mapping("filter", filter)
        validate_ok_for_replace(replacement)
        if let is not None:
            validate_is_mapping("let", let)
        raw = self._update(filter, replacement, upsert, bypass_doc_val=bypass_document_validation,
                           collation=collation, hint=hint, session=session, let=let, sort=sort,
                           comment=comment)
        return UpdateResult(raw, raw is not None)     # _update gives None when unacknowledged

    def update_one(self, filter: Any, update: Any, upsert: bool = False,
                   bypass_document_validation: Optional[bool] = None, collation: Any = None,
                   array_filters: Any = None, hint: Any = None, session: Any = None,
                   let: Any = None, sort: Any = None, comment: Any = None) -> UpdateResult:
        validate_is_mapping("filter", filter)
        validate_ok_for_update(update)
        validate_list_or_none("array_filters", array_filters)
        raw = self._update(filter, update, upsert, bypass_doc_val=bypass_document_validation,
                           collation=collation, array_filters=array_filters, hint=hint,
                           session=session, let=let, sort=sort, comment=comment)
        return UpdateResult(raw, raw is not None)     # _update gives None when unacknowledged

    def update_many(self, filter: Any, update: Any, upsert: bool = False,
                    array_filters: Any = None, bypass_document_validation: Optional[bool] = None,
                    collation: Any = None, hint: Any = None, session: Any = None,
                    let: Any = None, comment: Any = None) -> UpdateResult:
        validate_is_mapping("filter", filter)
        validate_ok_for_update(update)
        validate_list_or_none("array_filters", array_filters)
        raw = self._update(filter, update, upsert, multi=True,
                           bypass_doc_val=bypass_document_validation, collation=collation,
                           array_filters=array_filters, hint=hint, session=session, let=let,
                           comment=comment)
        return UpdateResult(raw, raw is not None)     # _update gives None when unacknowledged

    def _delete(self, criteria: Any, multi: bool, collation: Any = None, hint: Any = None,
                session: Any = None, let: Any = None, comment: Any = None) -> dict:
        validate_is_mapping("filter", criteria)
        if (session is None and collation is None and hint is None and let is None
                and comment is None and self._plain):
            return lean.delete(self, criteria, multi)
        write_concern = self._write_concern_for(session)
        stmt: dict = {"q": criteria, "limit": int(not multi)}
        collation = validate_collation_or_none(collation)
        if collation is not None:
            _require_acknowledged(write_concern.acknowledged, "Collation")
            stmt["collation"] = collation
        if hint is not None:
            stmt["hint"] = keys.hint_document(hint)
        cmd: dict = {"delete": self._name, "ordered": True, "deletes": [stmt]}
        if let is not None:
            validate_is_document_type("let", let)
            cmd["let"] = let
        if comment is not None:
            cmd["comment"] = comment
        return self._write_reply(self._run(cmd, session=session, write_concern=write_concern))

    def delete_one(self, filter: Any, collation: Any = None, hint: Any = None,
                   session: Any = None, let: Any = None, comment: Any = None) -> DeleteResult:
        raw = self._delete(filter, False, collation, hint, session, let, comment)
        return DeleteResult(raw, self._write_concern_for(session).acknowledged)

    def delete_many(self, filter: Any, collation: Any = None, hint: Any = None,
                    session: Any = None, let: Any = None, comment: Any = None) -> DeleteResult:
        raw = self._delete(filter, True, collation, hint, session, let, comment)
        return DeleteResult(raw, self._write_concern_for(session).acknowledged)

    # ------------------------------------------------------------------ reads
    def find(self, *args: Any, **kwargs: Any) -> Cursor:
        return Cursor(self, *args, **kwargs)

    def find_one(self, filter: Any = None, *args: Any, **kwargs: Any) -> Any:
        if filter is None:
            filter = {}
        elif type(filter) is not dict and not isinstance(filter, abc.Mapping):
            filter = {"_id": filter}
        if (args or kwargs or type(filter) is not dict or not self._plain or "query" in filter
                or "$query" in filter):    # anything find_command would treat specially
            cursor = self.find(filter, *args, **kwargs)
            for result in cursor.limit(-1):
                return result
            return None
        return lean.find_one(self, filter)

    def estimated_document_count(self, comment: Any = None, **kwargs: Any) -> int:
        if "session" in kwargs:
            raise ConfigurationError("estimated_document_count does not support sessions")
        if comment is not None:
            kwargs["comment"] = comment
        cmd: dict = {"count": self._name}
        cmd.update(kwargs)
        return int(self._run(cmd, read_concern=self.read_concern)["n"])

    def count_documents(self, filter: Any, session: Any = None, comment: Any = None,
                        **kwargs: Any) -> int:
        pipeline: list = [{"$match": filter}]
        if "skip" in kwargs:
            pipeline.append({"$skip": kwargs.pop("skip")})
        if "limit" in kwargs:
            pipeline.append({"$limit": kwargs.pop("limit")})
        if comment is not None:
            kwargs["comment"] = comment
        pipeline.append({"$group": {"_id": 1, "n": {"$sum": 1}}})
        if "hint" in kwargs:
            kwargs["hint"] = keys.hint_document(kwargs["hint"])
        collation = validate_collation_or_none(kwargs.pop("collation", None))
        cmd: dict = {"aggregate": self._name, "pipeline": pipeline, "cursor": {}}
        cmd.update(kwargs)
        reply = self._run(cmd, session=session, read_concern=self.read_concern,
                          collation=collation, allowable_errors=[26])
        if "cursor" not in reply:
            return 0
        batch = reply["cursor"]["firstBatch"]
        if not batch:
            return 0
        return decode_document(batch[0], self._write_response_codec_options)["n"]

    def distinct(self, key: str, filter: Any = None, session: Any = None, comment: Any = None,
                 hint: Any = None, **kwargs: Any) -> list:
        if not isinstance(key, str):
            raise TypeError(f"key must be an instance of str, not {type(key)}")
        if filter is not None:
            if "query" in kwargs:
                raise ConfigurationError("can't pass both filter and query")
            kwargs["query"] = filter
        collation = validate_collation_or_none(kwargs.pop("collation", None))
        cmd: dict = {"distinct": self._name, "key": key}
        cmd.update(kwargs)
        if comment is not None:
            cmd["comment"] = comment
        if hint is not None:
            cmd["hint"] = keys.hint_document(hint)
        reply = self._run(cmd, session=session, read_concern=self.read_concern,
                          collation=collation)
        return decode_value(list(reply["values"]), self.codec_options)

    def aggregate(self, pipeline: Any, session: Any = None, let: Any = None,
                  comment: Any = None, **kwargs: Any) -> CommandCursor:
        return aggregate(self, True, pipeline, session, kwargs, let, comment)

    def find_raw_batches(self, *args: Any, **kwargs: Any) -> RawBatchCursor:
        """Like find, but each step yields a whole batch as undecoded BSON bytes."""
        return RawBatchCursor(self, *args, **kwargs)

    def aggregate_raw_batches(self, pipeline: Any, session: Any = None, comment: Any = None,
                              **kwargs: Any) -> RawBatchCommandCursor:
        """Like aggregate, but each step yields a whole batch as undecoded BSON bytes."""
        return aggregate(self, True, pipeline, session, kwargs, None, comment,
                         cursor_class=RawBatchCommandCursor, raw_batches=True)

    # ------------------------------------------------------------------ find and modify
    def _find_and_modify(self, filter: Any, projection: Any, sort: Any, upsert: Any = None,
                         return_document: bool = ReturnDocument.BEFORE, array_filters: Any = None,
                         hint: Any = None, session: Any = None, let: Any = None,
                         **kwargs: Any) -> Any:
        validate_is_mapping("filter", filter)
        if not isinstance(return_document, bool):
            raise TypeError("return_document must be ReturnDocument.BEFORE or ReturnDocument.AFTER, "
                            f"not {type(return_document)}")
        if (len(kwargs) == 1 and projection is None and sort is None and array_filters is None
                and hint is None and session is None and let is None and self._plain):
            if upsert is not None:
                validate_boolean("upsert", upsert)
            (change, value), = kwargs.items()      # "update" or "remove"
            return lean.find_and_modify(self, filter, return_document, change, value, upsert)
        collation = validate_collation_or_none(kwargs.pop("collation", None))
        write_concern = self._write_concern_for_cmd(kwargs, session)
        cmd: dict = {"findAndModify": self._name, "query": filter, "new": return_document}
        if let is not None:
            validate_is_mapping("let", let)
            cmd["let"] = let
        cmd.update(kwargs)
        if projection is not None:
            cmd["fields"] = keys.fields_to_dict(projection, "projection")
        if sort is not None:
            cmd["sort"] = keys.index_document(sort)
        if upsert is not None:
            validate_boolean("upsert", upsert)
            cmd["upsert"] = upsert
        if array_filters is not None:
            _require_acknowledged(write_concern.acknowledged, "arrayFilters")
            cmd["arrayFilters"] = list(array_filters)
        if hint is not None:
            cmd["hint"] = keys.hint_document(hint)
        reply = self._run(cmd, session=session, write_concern=write_concern, collation=collation)
        if "writeErrors" in reply or "writeConcernError" in reply:
            self._write_reply(reply)
        value = reply.get("value")
        return None if value is None else self._decoder(value)

    def find_one_and_delete(self, filter: Any, projection: Any = None, sort: Any = None,
                            hint: Any = None, session: Any = None, let: Any = None,
                            comment: Any = None, **kwargs: Any) -> Any:
        kwargs["remove"] = True
        if comment is not None:
            kwargs["comment"] = comment
        return self._find_and_modify(filter, projection, sort, let=let, hint=hint,
                                     session=session, **kwargs)

    def find_one_and_replace(self, filter: Any, replacement: Any, projection: Any = None,
                             sort: Any = None, upsert: bool = False,
                             return_document: bool = ReturnDocument.BEFORE, hint: Any = None,
                             session: Any = None, let: Any = None, comment: Any = None,
                             **kwargs: Any) -> Any:
        validate_ok_for_replace(replacement)
        kwargs["update"] = replacement
        if comment is not None:
            kwargs["comment"] = comment
        return self._find_and_modify(filter, projection, sort, upsert, return_document,
                                     let=let, hint=hint, session=session, **kwargs)

    def find_one_and_update(self, filter: Any, update: Any, projection: Any = None,
                            sort: Any = None, upsert: bool = False,
                            return_document: bool = ReturnDocument.BEFORE,
                            array_filters: Any = None, hint: Any = None, session: Any = None,
                            let: Any = None, comment: Any = None, **kwargs: Any) -> Any:
        validate_ok_for_update(update)
        validate_list_or_none("array_filters", array_filters)
        kwargs["update"] = update
        if comment is not None:
            kwargs["comment"] = comment
        return self._find_and_modify(filter, projection, sort, upsert, return_document,
                                     array_filters, hint=hint, let=let, session=session, **kwargs)


def _require_acknowledged(acknowledged: bool, what: str) -> None:
    if not acknowledged:
        raise ConfigurationError(f"{what} is unsupported for unacknowledged writes.")
