"""What Cursor and CommandCursor share: the server cursor's id, the current batch, closing.

A cursor decodes each batch with its codec options when the batch arrives, in one call (as
pymongo decodes a reply); should that fail, the batch's documents are decoded one by one as
they are handed out, so the error surfaces at the document that causes it. Closing kills the
engine-side cursor at once; a cursor that is garbage collected while open has its kill queued on
the client (see runner.CommandRunner).
"""
from __future__ import annotations

import collections
from typing import Any, Optional

from bson.codec_options import CodecOptions
from bson.int64 import Int64

#: error codes after which the server cursor is gone (pymongo's list)
CURSOR_CLOSED_ERRORS = frozenset([43, 175, 237, 28617, 17406, 96, 136])


def kill_now(runner: Any, dbname: str, collname: str, cursor_id: int) -> None:
    """Send killCursors for one engine cursor, ignoring failures (as pymongo does)."""
    if runner.closed:
        return
    try:
        runner.send({"killCursors": collname, "cursors": [Int64(cursor_id)], "$db": dbname})
    except Exception:
        pass


class CursorBase:
    """State and closing logic common to find cursors and command cursors."""

    _id: Optional[int]
    _killed: bool
    _collection: Any
    _session: Any
    _codec_options: CodecOptions

    def _init_base(self, collection: Any, session: Any) -> None:
        self._collection = collection
        self._session = session
        self._data: collections.deque = collections.deque()
        self._lazy = False      # _data holds undecoded documents (a batch that failed to decode)
        self._codec_options = collection.codec_options
        self._decoder = collection._decoder
        self._batch_decoder = collection._batch_decoder

    def _take_batch(self, documents: list) -> None:
        """Keep a new batch, decoded (see the module docstring)."""
        try:
            self._data = collections.deque(self._decode_batch(documents))
            self._lazy = False
        except Exception:
            self._data = collections.deque(documents)
            self._lazy = True

    def _decode_batch(self, documents: list) -> list:
        return self._batch_decoder(documents)

    @property
    def alive(self) -> bool:
        """Does this cursor have the potential to return more data?

        True until the server cursor is exhausted or killed and the last batch is consumed; an
        alive cursor may still return no more documents.
        """
        return bool(len(self._data) or not self._killed)

    @property
    def cursor_id(self) -> Optional[int]:
        return self._id

    @property
    def address(self) -> None:
        """Always None: the embedded engine has no network address."""
        return None

    @property
    def session(self) -> Any:
        """The explicit session this cursor runs in, if any."""
        return self._session

    def _namespace(self) -> tuple[str, str]:
        raise NotImplementedError

    def _runner(self) -> Any:
        return self._collection.database.client._runner

    def _die(self, now: bool) -> None:
        """Mark the cursor killed and free its engine cursor (now, or at the next command)."""
        try:
            already_killed = self._killed
        except AttributeError:  # __init__ failed half way
            return
        self._killed = True
        cursor_id = self._id
        if not cursor_id or already_killed:
            return
        dbname, collname = self._namespace()
        runner = self._runner()
        if not now:
            runner.queue_kill(dbname, collname, cursor_id)
            return
        kill_now(runner, dbname, collname, cursor_id)

    def close(self) -> None:
        """Explicitly close / kill this cursor."""
        self._die(now=True)

    def __del__(self) -> None:
        try:
            self._die(now=False)
        except Exception:
            pass

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _decode(self, raw: Any) -> Any:
        return self._decoder(raw)

    def _refresh(self) -> int:
        raise NotImplementedError

    def _next_batch(self, result: list, total: Optional[int] = None) -> bool:
        """Move up to `total` documents of the current batch (fetching one if needed) to `result`."""
        if not len(self._data) and not self._killed:
            self._refresh()
        if not len(self._data):
            return False
        count = len(self._data) if total is None else min(len(self._data), total)
        data = self._data
        if self._lazy:
            decode = self._decode
            result.extend(decode(data.popleft()) for _ in range(count))
        else:
            result.extend(data.popleft() for _ in range(count))
        return True

    def to_list(self, length: Optional[int] = None) -> list:
        """The remaining documents (at most `length`) as a list."""
        result: list = []
        remaining = length
        if isinstance(length, int) and length < 1:
            raise ValueError("to_list() length must be greater than 0")
        while self.alive:
            if not self._next_batch(result, remaining):
                break
            if length is not None:
                remaining = length - len(result)
                if remaining == 0:
                    break
        return result
