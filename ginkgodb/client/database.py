"""Database: pymongo's database API (collections, commands, listing, aggregation)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from bson.codec_options import DEFAULT_CODEC_OPTIONS
from bson.dbref import DBRef
from pymongo.database import Database as PymongoDatabase
from pymongo.errors import CollectionInvalid, InvalidOperation

from .aggregation import aggregate
from .base import SettingsHolder
from .codec import decode_reply, plain_reply
from .collection import Collection
from .command_cursor import CommandCursor
from .pymongo_base import hide_inherited
from .validation import check_database_name, validate_is_mapping


@hide_inherited
class Database(SettingsHolder, PymongoDatabase):
    """A database of one client (pymongo.database.Database's API).

    A subclass of pymongo's Database only so that code checking `isinstance(db, Database)`
    (pymongo's `gridfs`, ODMs) accepts it: pymongo's `__init__` never runs and every method is
    ours (tests/unit/client/test_client_gridfs.py checks that none of pymongo's is left).
    """

    def __init__(self, client: Any, name: str, codec_options: Any = None,
                 read_preference: Any = None, write_concern: Any = None,
                 read_concern: Any = None) -> None:
        super().__init__(*client._settings_or_own(codec_options, read_preference, write_concern,
                                                  read_concern))
        if name != "$external":
            check_database_name(name)
        self._name = name
        self._client = client

    @property
    def client(self) -> Any:
        return self._client

    @property
    def name(self) -> str:
        return self._name

    def with_options(self, codec_options: Any = None, read_preference: Any = None,
                     write_concern: Any = None, read_concern: Any = None) -> Database:
        return Database(self._client, self._name,
                        *self._settings_or_own(codec_options, read_preference, write_concern,
                                               read_concern))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Database):
            return self._client == other.client and self._name == other.name
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((self._client, self._name))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._client!r}, {self._name!r})"

    def __getattr__(self, name: str) -> Collection:
        if name.startswith("_"):
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}. To access the "
                                 f"{name} collection, use database[{name!r}].")
        return self.__getitem__(name)

    def __getitem__(self, name: str) -> Collection:
        return Collection(self, name)

    __iter__ = None

    def __next__(self) -> Any:
        raise TypeError("'Database' object is not iterable")

    next = __next__

    def __bool__(self) -> bool:
        raise NotImplementedError(f"{type(self).__name__} objects do not implement truth value "
                                  "testing or bool(). Please compare with None instead: "
                                  "database is not None")

    def get_collection(self, name: str, codec_options: Any = None, read_preference: Any = None,
                       write_concern: Any = None, read_concern: Any = None) -> Collection:
        return Collection(self, name, False, codec_options, read_preference, write_concern,
                          read_concern)

    def watch(self, *args: Any, **kwargs: Any) -> Any:
        """A change stream on this database, as pymongo's `watch()`:
        `pipeline`, `full_document`, `resume_after`, `max_await_time_ms`, `batch_size`,
        `collation`, `start_at_operation_time`, `session`, `start_after`, `comment`,
        `full_document_before_change`, `show_expanded_events`."""
        from .change_stream import watch
        return watch(self, "database", *args, **kwargs)

    # ------------------------------------------------------------------ commands
    def command(self, command: Any, value: Any = 1, check: bool = True,
                allowable_errors: Any = None, read_preference: Any = None,
                codec_options: Any = None, session: Any = None, comment: Any = None,
                **kwargs: Any) -> Any:
        """Run a command document (or `{command: value}`) and return its reply, decoded with
        `codec_options` (default: dicts)."""
        if comment is not None:
            kwargs["comment"] = comment
        return self._command(command, value, check, allowable_errors,
                             codec_options or DEFAULT_CODEC_OPTIONS, session, **kwargs)

    def _command(self, command: Any, value: Any = 1, check: bool = True,
                 allowable_errors: Any = None, codec_options: Any = DEFAULT_CODEC_OPTIONS,
                 session: Any = None, write_concern: Any = None,
                 parse_write_concern_error: bool = False, **kwargs: Any) -> Any:
        cmd = {command: value} if isinstance(command, str) else dict(command)
        cmd.update(kwargs)
        reply = self._client._runner.run(
            self._name, cmd, codec_options=codec_options, session=session, check=check,
            allowable_errors=allowable_errors, write_concern=write_concern,
            parse_write_concern_error=parse_write_concern_error)
        return decode_reply(reply, codec_options)

    def cursor_command(self, command: Any, value: Any = 1, read_preference: Any = None,
                       codec_options: Any = None, session: Any = None, comment: Any = None,
                       max_await_time_ms: Optional[int] = None, **kwargs: Any) -> CommandCursor:
        """Run a command that returns a cursor and iterate it."""
        opts = codec_options or DEFAULT_CODEC_OPTIONS
        if comment is not None:
            kwargs["comment"] = comment
        cmd = {command: value} if isinstance(command, str) else dict(command)
        cmd.update(kwargs)
        reply = self._client._runner.run(self._name, cmd, codec_options=opts, session=session)
        if not reply.get("cursor"):
            raise InvalidOperation("Command does not return a cursor.")
        coll = self.get_collection("$cmd", codec_options=opts)
        return CommandCursor(coll, reply["cursor"], None, max_await_time_ms=max_await_time_ms,
                             session=session, comment=comment)

    def aggregate(self, pipeline: Any, session: Any = None, **kwargs: Any) -> CommandCursor:
        """A database-level aggregation (`aggregate: 1`, e.g. $documents, $currentOp)."""
        return aggregate(self, False, pipeline, session, kwargs, None, None)

    # ------------------------------------------------------------------ collections
    def create_collection(self, name: str, codec_options: Any = None,
                          read_preference: Any = None, write_concern: Any = None,
                          read_concern: Any = None, session: Any = None,
                          check_exists: Optional[bool] = True, **kwargs: Any) -> Collection:
        """Create a collection explicitly (options: capped, size, max, validator, collation...)."""
        if check_exists and name in self.list_collection_names(filter={"name": name},
                                                               session=session):
            raise CollectionInvalid(f"collection {name} already exists")
        coll = Collection(self, name, False, codec_options, read_preference, write_concern,
                          read_concern)
        coll._create(kwargs, session)
        return coll

    def list_collections(self, session: Any = None, filter: Any = None, comment: Any = None,
                         **kwargs: Any) -> CommandCursor:
        if filter is not None:
            kwargs["filter"] = filter
        if comment is not None:
            kwargs["comment"] = comment
        cmd: dict = {"listCollections": 1, "cursor": {}}
        cmd.update(kwargs)
        reply = self._client._runner.run(self._name, cmd, session=session)
        coll = self.get_collection("$cmd", codec_options=DEFAULT_CODEC_OPTIONS)
        return CommandCursor(coll, reply["cursor"], None, session=session,
                             comment=cmd.get("comment"))

    def list_collection_names(self, session: Any = None, filter: Any = None,
                              comment: Any = None, **kwargs: Any) -> list[str]:
        if comment is not None:
            kwargs["comment"] = comment
        if filter is None:
            kwargs["nameOnly"] = True
        else:
            validate_is_mapping("filter", filter)
            kwargs["filter"] = filter
            if not filter or (len(filter) == 1 and "name" in filter):
                kwargs["nameOnly"] = True
        return [doc["name"] for doc in self.list_collections(session=session, **kwargs)]

    def drop_collection(self, name_or_collection: Any, session: Any = None, comment: Any = None,
                        encrypted_fields: Optional[Mapping] = None) -> dict:
        name = name_or_collection.name if isinstance(name_or_collection, Collection) \
            else name_or_collection
        if not isinstance(name, str):
            raise TypeError(f"name_or_collection must be an instance of str, not {type(name)}")
        cmd: dict = {"drop": name}
        if comment is not None:
            cmd["comment"] = comment
        reply = self._client._runner.run(
            self._name, cmd, session=session, allowable_errors=["ns not found", 26],
            write_concern=self._write_concern_for(session), parse_write_concern_error=True)
        return plain_reply(reply)

    def validate_collection(self, name_or_collection: Any, scandata: bool = False,
                            full: bool = False, session: Any = None, background: Any = None,
                            comment: Any = None) -> dict:
        name = name_or_collection.name if isinstance(name_or_collection, Collection) \
            else name_or_collection
        if not isinstance(name, str):
            raise TypeError("name_or_collection must be an instance of str or Collection, not "
                            f"{type(name)}")
        cmd: dict = {"validate": name, "scandata": scandata, "full": full}
        if comment is not None:
            cmd["comment"] = comment
        if background is not None:
            cmd["background"] = background
        result = self.command(cmd, session=session)
        info = result.get("result")
        if isinstance(info, str) and ("exception" in info or "corrupt" in info):
            raise CollectionInvalid(f"{name} invalid: {info}")
        if info is None and not result.get("valid", False):
            raise CollectionInvalid(f"{name} invalid: {result!r}")
        return result

    def dereference(self, dbref: DBRef, session: Any = None, comment: Any = None,
                    **kwargs: Any) -> Any:
        """The document a DBRef points to (None if missing); it must point into this database."""
        if not isinstance(dbref, DBRef):
            raise TypeError(f"cannot dereference a {type(dbref)}")
        if dbref.database is not None and dbref.database != self._name:
            raise ValueError("trying to dereference a DBRef that points to another database "
                             f"({dbref.database!r} not {self._name!r})")
        return self[dbref.collection].find_one({"_id": dbref.id}, session=session,
                                               comment=comment, **kwargs)
