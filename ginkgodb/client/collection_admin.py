"""Collection methods that manage the collection rather than its documents: creation options,
indexes, drop, rename, change streams. Mixed into Collection.
"""
from __future__ import annotations

from typing import Any

from bson.codec_options import CodecOptions
from bson.son import SON
from pymongo.collation import validate_collation_or_none
from pymongo.errors import InvalidName, OperationFailure
from pymongo.operations import IndexModel
from pymongo.read_preferences import ReadPreference

from ..errors import ErrorCode
from .codec import plain_reply
from .command_cursor import CommandCursor
from .keys import gen_index_name
from .validation import validate_list


class CollectionAdmin:
    """Index and collection management for Collection (needs its _run, name and settings)."""

    _name: str
    _full_name: str
    _database: Any

    def _create(self, options: dict, session: Any) -> None:
        """The `create` command with the given options (create_collection and Collection(create=))."""
        options = dict(options)
        collation = validate_collation_or_none(options.pop("collation", None))
        cmd: dict = {"create": self._name}
        if options:
            if "size" in options:
                options["size"] = float(options["size"])
            cmd.update(options)
        self._run(cmd, session=session, write_concern=self._write_concern_for(session),
                  collation=collation)

    # ------------------------------------------------------------------ indexes
    def create_indexes(self, indexes: Any, session: Any = None, comment: Any = None,
                       **kwargs: Any) -> list[str]:
        validate_list("indexes", indexes)
        if comment is not None:
            kwargs["comment"] = comment
        return self._create_indexes(indexes, session, **kwargs)

    def _create_indexes(self, indexes: list, session: Any, **kwargs: Any) -> list[str]:
        documents, names = [], []
        for index in indexes:
            if not isinstance(index, IndexModel):
                raise TypeError(f"{index!r} is not an instance of pymongo.operations.IndexModel")
            documents.append(index.document)
            names.append(index.document["name"])
        cmd: dict = {"createIndexes": self._name, "indexes": documents}
        cmd.update(kwargs)
        self._run(cmd, session=session, write_concern=self._write_concern_for(session))
        return names

    def create_index(self, keys: Any, session: Any = None, comment: Any = None,
                     **kwargs: Any) -> str:
        cmd_options: dict = {}
        if "maxTimeMS" in kwargs:
            cmd_options["maxTimeMS"] = kwargs.pop("maxTimeMS")
        if comment is not None:
            cmd_options["comment"] = comment
        return self._create_indexes([IndexModel(keys, **kwargs)], session, **cmd_options)[0]

    def drop_indexes(self, session: Any = None, comment: Any = None, **kwargs: Any) -> None:
        if comment is not None:
            kwargs["comment"] = comment
        self._drop_index("*", session=session, **kwargs)

    def drop_index(self, index_or_name: Any, session: Any = None, comment: Any = None,
                   **kwargs: Any) -> None:
        self._drop_index(index_or_name, session, comment, **kwargs)

    def _drop_index(self, index_or_name: Any, session: Any = None, comment: Any = None,
                    **kwargs: Any) -> None:
        name = index_or_name
        if isinstance(index_or_name, list):
            name = gen_index_name(index_or_name)
        if not isinstance(name, str):
            raise TypeError(f"index_or_name must be an instance of str or list, not {type(name)}")
        cmd: dict = {"dropIndexes": self._name, "index": name}
        cmd.update(kwargs)
        if comment is not None:
            cmd["comment"] = comment
        self._run(cmd, session=session, allowable_errors=["ns not found", 26],
                  write_concern=self._write_concern_for(session))

    def list_indexes(self, session: Any = None, comment: Any = None) -> CommandCursor:
        """The collection's index specs (SON documents), empty for a missing collection."""
        coll = self.with_options(codec_options=CodecOptions(SON),
                                 read_preference=ReadPreference.PRIMARY)
        cmd: dict = {"listIndexes": self._name, "cursor": {}}
        if comment is not None:
            cmd["comment"] = comment
        try:
            cursor = self._run(cmd, session=session)["cursor"]
        except OperationFailure as exc:
            if exc.code != ErrorCode.NamespaceNotFound:
                raise
            cursor = {"id": 0, "firstBatch": []}
        return CommandCursor(coll, cursor, None, session=session, comment=cmd.get("comment"))

    def index_information(self, session: Any = None, comment: Any = None) -> dict:
        """{index name: {key: [(field, direction), ...], other options...}}."""
        info = {}
        for index in self.list_indexes(session=session, comment=comment):
            index["key"] = list(index["key"].items())
            index = dict(index)
            info[index.pop("name")] = index
        return info

    # ------------------------------------------------------------------ collection
    def drop(self, session: Any = None, comment: Any = None, encrypted_fields: Any = None) -> None:
        dbo = self._database.client.get_database(self._database.name, self.codec_options,
                                                 self.read_preference, self.write_concern,
                                                 self.read_concern)
        dbo.drop_collection(self._name, session=session, comment=comment,
                            encrypted_fields=encrypted_fields)

    def rename(self, new_name: str, session: Any = None, comment: Any = None,
               **kwargs: Any) -> dict:
        """Rename within the same database (`renameCollection` on admin); dropTarget=True
        replaces an existing target."""
        if not isinstance(new_name, str):
            raise TypeError(f"new_name must be an instance of str, not {type(new_name)}")
        if not new_name or ".." in new_name:
            raise InvalidName("collection names cannot be empty")
        if new_name[0] == "." or new_name[-1] == ".":
            raise InvalidName("collection names must not start or end with '.'")
        if "$" in new_name and not new_name.startswith("oplog.$main"):
            raise InvalidName("collection names must not contain '$'")
        cmd: dict = {"renameCollection": self._full_name, "to": f"{self._database.name}.{new_name}"}
        cmd.update(kwargs)
        if comment is not None:
            cmd["comment"] = comment
        write_concern = self._write_concern_for_cmd(cmd, session)
        reply = self._database.client._runner.run(
            "admin", cmd, codec_options=self.codec_options, session=session,
            write_concern=write_concern, parse_write_concern_error=True)
        return plain_reply(reply)

    def options(self, session: Any = None, comment: Any = None) -> dict:
        """The options the collection was created with ({} when it does not exist)."""
        dbo = self._database.client.get_database(self._database.name, self.codec_options,
                                                 self.read_preference, self.write_concern,
                                                 self.read_concern)
        cursor = dbo.list_collections(session=session, filter={"name": self._name},
                                      comment=comment)
        result = next(iter(cursor), None)
        if not result:
            return {}
        options = result.get("options", {})
        options.pop("create", None)
        return options

    def watch(self, *args: Any, **kwargs: Any) -> Any:
        """A change stream on this collection, as pymongo's `watch()`:
        `pipeline`, `full_document`, `resume_after`, `max_await_time_ms`, `batch_size`,
        `collation`, `start_at_operation_time`, `session`, `start_after`, `comment`,
        `full_document_before_change`, `show_expanded_events`."""
        from .change_stream import watch
        return watch(self, "collection", *args, **kwargs)
