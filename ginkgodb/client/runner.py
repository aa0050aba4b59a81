"""Sending command documents to the engine: the embedded client's replacement for a connection.

`CommandRunner.run` does what pymongo's connection layer does around a command: attach
readConcern, collation, writeConcern, the session's lsid and `$db`; normalise the document as the
wire would; hand it to `commands.dispatch`; and check the reply with pymongo's rules. Cursors
killed by garbage collection are queued and closed before the next command, never from inside a
finaliser (which may run while the engine holds a lock).
"""
from __future__ import annotations

import collections
import threading
from collections.abc import Container, Mapping
from typing import Any, Optional, Protocol

from bson.codec_options import DEFAULT_CODEC_OPTIONS, CodecOptions
from bson.int64 import Int64
from pymongo.errors import InvalidOperation

from .codec import plain_reply, to_wire, wire_value
from .raising import check_command_reply
from .session import check_session_for_write


class Channel(Protocol):
    """Where command documents go: the engine, or a fake in tests."""

    def run(self, cmd: dict) -> Mapping[str, Any]: ...


class EngineChannel:
    """Commands straight into `commands.dispatch`.

    Each thread using the client gets its own CommandContext, as each connection of a server
    does: per-operation state in the context (deadline, interruption) never leaks between
    threads sharing one MongoClient.
    """

    def __init__(self, engine: Any, javascript_enabled: bool = True) -> None:
        # imported here: loading the command table pulls in the whole engine, which a client
        # given another channel (tests) does not need
        from ..commands import CommandContext, dispatch
        self._engine = engine
        self._javascript_enabled = javascript_enabled
        self._new_context = CommandContext
        self._dispatch = dispatch
        self._local = threading.local()

    @property
    def context(self) -> Any:
        """This thread's command context."""
        ctx = getattr(self._local, "ctx", None)
        if ctx is None:
            ctx = self._local.ctx = self._new_context(engine=self._engine,
                                                      javascript_enabled=self._javascript_enabled)
        return ctx

    def run(self, cmd: dict) -> Mapping[str, Any]:
        try:
            ctx = self._local.ctx
        except AttributeError:
            ctx = self.context
        return self._dispatch(ctx, cmd)


class CommandRunner:
    """Runs command documents for one client and turns error replies into exceptions."""

    def __init__(self, channel: Channel, client: Any) -> None:
        self.channel = channel
        self._client = client
        self._closed = False
        self._kills: collections.deque = collections.deque()

    def run(self, dbname: str, cmd: dict, *, codec_options: CodecOptions = DEFAULT_CODEC_OPTIONS,
            session: Any = None, write_concern: Any = None, read_concern: Any = None,
            collation: Any = None, check: bool = True, allowable_errors: Optional[Container] = None,
            parse_write_concern_error: bool = False, encoded: bool = False,
            reads: bool = False) -> Mapping[str, Any]:
        """Run `cmd` against database `dbname`; returns the engine's reply (checked if `check`).

        `codec_options` encode the command's values (as pymongo encodes them); `encoded` says the
        command is already wire-normalised (inserts hand over pre-encoded documents); `reads`
        (implied by a `read_concern`) lets the session add its causal/snapshot read concern.
        """
        if self._closed:
            raise InvalidOperation("Cannot use MongoClient after close")
        if read_concern is not None or collation is not None or (reads and session is not None):
            _attach_read(cmd, session, read_concern, collation, reads)
        unacknowledged = False
        if write_concern is not None:
            unacknowledged = not write_concern.acknowledged
            if not write_concern.is_server_default:
                cmd["writeConcern"] = (wire_value(write_concern.document, DEFAULT_CODEC_OPTIONS)
                                       if encoded else write_concern.document)
        if session is not None:
            check_session_for_write(session, write_concern)
        cmd["$db"] = dbname
        if not encoded:
            cmd = to_wire(cmd, codec_options)
        if session is not None:   # after: its lsid (a UUID Binary) would send the copy the BSON way
            session._apply_to(cmd, self._client)
        reply = self.send(cmd)
        if session is not None:
            session._process_reply(reply)
        if unacknowledged:
            return {"ok": 1}
        if check and (not reply.get("ok") or (parse_write_concern_error
                                              and "writeConcernError" in reply)):
            check_command_reply(plain_reply(reply), allowable_errors, parse_write_concern_error)
        return reply

    def run_read(self, dbname: str, cmd: dict) -> Mapping[str, Any]:
        """run(dbname, cmd, reads=True, encoded=True) for a command without a session, a
        concern or a collation (the lean paths' finds): what run does for such a command,
        without its keyword arguments and the tests that cannot apply."""
        if self._closed:
            raise InvalidOperation("Cannot use MongoClient after close")
        cmd["$db"] = dbname
        if self._kills:
            self.flush_kills()
        reply = self.channel.run(cmd)
        if not reply.get("ok"):
            check_command_reply(plain_reply(reply), None, False)
        return reply

    def send(self, cmd: dict) -> Mapping[str, Any]:
        """One finished command document to the engine, after any queued cursor kills."""
        if self._kills:
            self.flush_kills()
        return self.channel.run(cmd)

    def queue_kill(self, dbname: str, collname: str, cursor_id: int) -> None:
        """Close a server cursor at the next opportunity (safe to call from __del__)."""
        if not self._closed:
            self._kills.append((dbname, collname, cursor_id))

    def flush_kills(self) -> None:
        while self._kills:
            try:
                dbname, collname, cursor_id = self._kills.popleft()
            except IndexError:
                return
            self.channel.run({"killCursors": collname, "cursors": [Int64(cursor_id)],
                              "$db": dbname})

    def close(self) -> None:
        if not self._closed:
            self.flush_kills()
            self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidOperation("Cannot use MongoClient after close")


def _attach_read(cmd: dict, session: Any, read_concern: Any, collation: Any, reads: bool) -> None:
    """readConcern (the collection's, then the session's additions) and collation, in the order
    pymongo puts them in a command."""
    in_txn = session is not None and session.in_transaction
    if read_concern is not None and not in_txn:
        if read_concern.level:
            cmd["readConcern"] = read_concern.document
        reads = True
    if reads and session is not None and not in_txn:
        session._update_read_concern(cmd)
    if collation is not None:
        cmd["collation"] = collation
