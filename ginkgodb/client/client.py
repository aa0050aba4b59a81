"""MongoClient: the embedded entry point, shaped like pymongo.MongoClient.

`MongoClient("./data")` opens (creating if needed) durable storage in that directory;
`MongoClient()` or `MongoClient(":memory:")` an in-memory database set that lives as long as the
client. `ginkgodb://<path>` is accepted as a spelling of a path. Server URIs (mongodb://) are
refused: use pymongo itself to talk to a server. Clients opened on the same directory in one
process share one engine; the last close() releases it.
"""
from __future__ import annotations

from typing import Any, Optional

from pymongo.errors import ConfigurationError, InvalidOperation
from pymongo.read_preferences import ReadPreference
from pymongo.write_concern import DEFAULT_WRITE_CONCERN

from . import engines
from .base import SettingsHolder
from .codec import plain_reply
from .command_cursor import CommandCursor
from .database import Database
from .options import parse_settings
from .pymongo_cursor import PymongoCursorHooks
from .runner import CommandRunner, EngineChannel
from .session import ClientSession, new_session_options


class MongoClient(PymongoCursorHooks, SettingsHolder):
    """An embedded ginkgodb database set with pymongo's MongoClient API."""

    def __init__(self, host: Any = None, port: Optional[int] = None, document_class: Any = None,
                 tz_aware: Optional[bool] = None, connect: Optional[bool] = None,
                 type_registry: Any = None, **kwargs: Any) -> None:
        channel = kwargs.pop("_channel", None)   # tests: a fake engine channel
        # server-side JavaScript ($where, $function, $accumulator, mapReduce), on by default as
        # in mongod; javascriptEnabled=False answers as `mongod --noscripting`
        javascript_enabled = bool(kwargs.pop("javascriptEnabled", True))
        # the codec of collections created without storageEngine (`ginkgodb serve --storageCompression`)
        compression = kwargs.pop("storageCompression", None)
        # workload statistics ($queryStats, top, query analyzers), on by default; queryStats=False
        # turns them off for the data directory's engine (setParameter internalQueryStatsRateLimit: 0
        # stops $queryStats alone, process-wide)
        query_stats = bool(kwargs.pop("queryStats", True))
        # `port` names no server here; it is accepted and unused so that libraries that always
        # pass one (MongoEngine's connect passes 27017) work with mongo_client_class=MongoClient
        if connect is not None:
            kwargs["connect"] = connect
        settings = parse_settings(host, document_class, tz_aware, type_registry, kwargs)
        super().__init__(settings.codec_options, settings.read_preference,
                         settings.write_concern, settings.read_concern)
        self._path = settings.path
        self._engine: Any = None
        self._engine_key: Optional[str] = None
        if channel is None:
            self._engine, self._engine_key = engines.acquire(settings.path, compression)
            if not query_stats and getattr(self._engine, "query_stats", None) is not None:
                self._engine.query_stats.enabled = False
            channel = EngineChannel(self._engine, javascript_enabled)
        self._runner = CommandRunner(channel, self)

    # ------------------------------------------------------------------ identity and state
    @property
    def path(self) -> Optional[str]:
        """The data directory, or None for an in-memory client."""
        return self._path

    @property
    def address(self) -> None:
        """Always None: there is no server."""
        return None

    @property
    def primary(self) -> None:
        return None

    @property
    def nodes(self) -> frozenset:
        return frozenset()

    @property
    def is_primary(self) -> bool:
        """Always True: the embedded database accepts writes."""
        return True

    @property
    def is_mongos(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MongoClient):
            return self._identity() == other._identity()
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._identity())

    def _identity(self) -> Any:
        return self._engine_key or id(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._path or ':memory:'!r})"

    def __getattr__(self, name: str) -> Database:
        if name.startswith("_"):
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}. To access the "
                                 f"{name} database, use client[{name!r}].")
        return self.__getitem__(name)

    def __getitem__(self, name: str) -> Database:
        return Database(self, name)

    __iter__ = None

    def __next__(self) -> Any:
        raise TypeError("'MongoClient' object is not iterable")

    next = __next__

    def __enter__(self) -> MongoClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close open cursors and release the engine (shared engines close with their last client)."""
        if self._runner.closed:
            return
        self._runner.close()
        if self._engine is not None:
            engines.release(self._engine, self._engine_key)

    # ------------------------------------------------------------------ databases
    def get_database(self, name: Optional[str] = None, codec_options: Any = None,
                     read_preference: Any = None, write_concern: Any = None,
                     read_concern: Any = None) -> Database:
        if name is None:
            raise ConfigurationError("No default database defined")
        return Database(self, name, codec_options, read_preference, write_concern, read_concern)

    def get_default_database(self, default: Optional[str] = None, codec_options: Any = None,
                             read_preference: Any = None, write_concern: Any = None,
                             read_concern: Any = None) -> Database:
        """The database named `default` (an embedded client has no URI naming one)."""
        if default is None:
            raise ConfigurationError("No default database name defined or provided.")
        return Database(self, default, codec_options, read_preference, write_concern, read_concern)

    def _admin(self) -> Database:
        return self.get_database("admin", read_preference=ReadPreference.PRIMARY,
                                 write_concern=DEFAULT_WRITE_CONCERN)

    def server_info(self, session: Any = None) -> dict:
        """The engine's buildInfo (version, versionArray...)."""
        return self.admin.command("buildinfo", session=session)

    def list_databases(self, session: Any = None, comment: Any = None,
                       **kwargs: Any) -> CommandCursor:
        cmd: dict = {"listDatabases": 1}
        cmd.update(kwargs)
        if comment is not None:
            cmd["comment"] = comment
        admin = self._admin()
        reply = plain_reply(self._runner.run("admin", cmd, session=session))
        cursor = {"id": 0, "firstBatch": reply["databases"], "ns": "admin.$cmd"}
        return CommandCursor(admin["$cmd"], cursor, None, comment=comment)

    def list_database_names(self, session: Any = None, comment: Any = None) -> list[str]:
        return [doc["name"] for doc in self.list_databases(session, nameOnly=True,
                                                            comment=comment)]

    def drop_database(self, name_or_database: Any, session: Any = None,
                      comment: Any = None) -> None:
        name = name_or_database.name if isinstance(name_or_database, Database) \
            else name_or_database
        if not isinstance(name, str):
            raise TypeError("name_or_database must be an instance of str or a Database, not "
                            f"{type(name)}")
        self[name]._command({"dropDatabase": 1, "comment": comment}, session=session,
                            write_concern=self._write_concern_for(session),
                            parse_write_concern_error=True)

    # ------------------------------------------------------------------ sessions and more
    def start_session(self, causal_consistency: Optional[bool] = None,
                      default_transaction_options: Any = None,
                      snapshot: Optional[bool] = False) -> ClientSession:
        """A session for `session=` arguments and transactions (pymongo's ClientSession API)."""
        self._runner._check_open()
        options = new_session_options(causal_consistency, default_transaction_options, snapshot)
        return ClientSession(self, options)

    def watch(self, *args: Any, **kwargs: Any) -> Any:
        """A change stream on this client (every database), as pymongo's `watch()`:
        `pipeline`, `full_document`, `resume_after`, `max_await_time_ms`, `batch_size`,
        `collation`, `start_at_operation_time`, `session`, `start_after`, `comment`,
        `full_document_before_change`, `show_expanded_events`."""
        from .change_stream import watch
        return watch(self._admin(), "cluster", *args, **kwargs)

    def bulk_write(self, models: Any, *args: Any, **kwargs: Any) -> Any:
        """The 8.0 `bulkWrite` command is not available (ginkgodb follows MongoDB 7.0)."""
        raise InvalidOperation("MongoClient.bulk_write requires MongoDB server version 8.0+.")
