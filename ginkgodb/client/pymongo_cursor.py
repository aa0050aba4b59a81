"""What pymongo's own Cursor asks of its client, answered by the embedded client.

`gridfs.GridFS.find` and `GridFSBucket.find` return `GridOutCursor`, a subclass of pymongo's
`Cursor`, built on our Collection. That cursor keeps its options itself and asks its client for
a few things only: `options.timeout`, `_ensure_session()`, `_encrypter`, `_run_operation()` (run
its find/getMore) and `_cleanup_cursor_lock/_no_lock()` (kill its cursor). MongoClient answers
them here by building the same command documents our own Cursor sends (`find_command.py`) and
running them through the client's CommandRunner: no pymongo network code runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from pymongo.errors import InvalidOperation
from pymongo.response import Response

from .codec import decode_reply
from .find_command import FindOptions, find_command, get_more_command


@dataclass(frozen=True)
class EmbeddedClientOptions:
    """The part of pymongo's `MongoClient.options` that its cursors and `gridfs` read."""

    timeout: Optional[float] = None   # timeoutMS is accepted without effect (no network)


_OPTIONS = EmbeddedClientOptions()
# pymongo's cursor needs an address to kill its cursor by; there is no server
_ADDRESS = ("embedded", 0)


class PymongoCursorHooks:
    """Mixed into MongoClient: the client protocol of pymongo's `Cursor`."""

    _runner: Any
    _encrypter = None   # no client-side field level encryption

    @property
    def options(self) -> EmbeddedClientOptions:
        return _OPTIONS

    def _ensure_session(self, session: Any = None) -> Any:
        """pymongo's cursor asks for an implicit session; commands here need none."""
        return session

    def _run_operation(self, operation: Any, unpack_res: Any, address: Any = None) -> Response:
        """Run pymongo's `_Query` (find or explain) or `_GetMore` as a command; the reply comes
        back as a `Response` whose one document is the decoded reply, as pymongo's own."""
        if getattr(operation, "exhaust", False):
            raise InvalidOperation("exhaust cursors are not supported by the embedded client")
        if operation.name == "getMore":
            cmd = get_more_command(operation.cursor_id, operation.coll, operation.ntoreturn,
                                   operation.max_await_time_ms, operation.comment)
            reply = self._runner.run(operation.db, cmd, codec_options=operation.codec_options,
                                     session=operation.session)
        else:
            opts = _find_options(operation)
            if opts.explain:
                operation.name = "explain"   # as pymongo's `_Query.as_command` renames it
            cmd = find_command(operation.coll, opts)
            reply = self._runner.run(operation.db, cmd, codec_options=operation.codec_options,
                                     session=operation.session,
                                     read_concern=operation.read_concern,
                                     collation=operation.collation, reads=True)
        doc = decode_reply(reply, operation.codec_options)
        return Response(data=None, address=_ADDRESS, request_id=0, duration=None,  # type: ignore[arg-type]
                        docs=[doc])

    def _cleanup_cursor_lock(self, cursor_id: int, address: Any, conn_mgr: Any, session: Any,
                             explicit_session: bool = True) -> None:
        self._kill(cursor_id, address)

    def _cleanup_cursor_no_lock(self, cursor_id: int, address: Any, conn_mgr: Any, session: Any,
                                explicit_session: bool = True) -> None:
        self._kill(cursor_id, address)

    def _kill(self, cursor_id: int, address: Any) -> None:
        """Queued, never run here: `_no_lock` is called from finalisers (see runner.py)."""
        if cursor_id and address is not None:
            dbname, collname = address.namespace.split(".", 1)
            self._runner.queue_kill(dbname, collname, cursor_id)


def _find_options(operation: Any) -> FindOptions:
    """pymongo's `_Query` fields as the FindOptions our find command is built from (its spec
    already carries the modifiers: sort as `$orderby`, explain as `$explain`...)."""
    opts = FindOptions(operation.spec)
    opts.projection = operation.fields
    opts.skip = operation.ntoskip
    opts.limit = operation.limit
    opts.batch_size = operation.batch_size
    opts.explain = bool(operation.spec.get("$explain"))
    opts.allow_disk_use = operation.allow_disk_use
    opts.query_flags = operation.flags
    return opts
