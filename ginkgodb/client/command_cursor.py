"""CommandCursor: the cursor of aggregate, listIndexes, listCollections and listDatabases.

It starts from the `cursor` document of a command reply ({id, ns, firstBatch}) and fetches
further batches with getMore on the reply's namespace.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from pymongo.errors import OperationFailure

from .cursor_base import CURSOR_CLOSED_ERRORS, CursorBase
from .find_command import get_more_command


class CommandCursor(CursorBase):
    """A cursor created by a command (pymongo.command_cursor.CommandCursor's API)."""

    def __init__(self, collection: Any, cursor_info: Mapping[str, Any], address: Any = None,
                 batch_size: int = 0, max_await_time_ms: Optional[int] = None,
                 session: Any = None, comment: Any = None) -> None:
        self._id = cursor_info["id"]
        self._killed = self._id == 0
        self._init_base(collection, session)
        self._take_batch(cursor_info["firstBatch"])
        self._post_batch_resume_token = cursor_info.get("postBatchResumeToken")
        self._max_await_time_ms = max_await_time_ms
        self._comment = comment
        self._ns = cursor_info.get("ns") or collection.full_name
        self.batch_size(batch_size)
        if not isinstance(max_await_time_ms, int) and max_await_time_ms is not None:
            raise TypeError("max_await_time_ms must be an integer or None, not "
                            f"{type(max_await_time_ms)}")

    def _namespace(self) -> tuple[str, str]:
        dbname, collname = self._ns.split(".", 1)
        return dbname, collname

    def batch_size(self, batch_size: int) -> CommandCursor:
        """The number of documents per getMore batch (0: the engine's default)."""
        if not isinstance(batch_size, int):
            raise TypeError(f"batch_size must be an integer, not {type(batch_size)}")
        if batch_size < 0:
            raise ValueError("batch_size must be >= 0")
        self._batch_size = 2 if batch_size == 1 else batch_size  # as pymongo: never 1
        return self

    def __iter__(self) -> CommandCursor:
        return self

    def __next__(self) -> Any:
        return self.next()

    def next(self) -> Any:
        while self.alive:
            doc = self._try_next(True)
            if doc is not None:
                return doc
        raise StopIteration

    def try_next(self) -> Any:
        """The next document, or None when the current batch is empty and no more arrives."""
        return self._try_next(True)

    def _try_next(self, get_more_allowed: bool) -> Any:
        if not len(self._data) and not self._killed and get_more_allowed:
            self._refresh()
        if self._data:
            return self._decode(self._data.popleft()) if self._lazy else self._data.popleft()
        return None

    def _refresh(self) -> int:
        if len(self._data) or self._killed:
            return len(self._data)
        if not self._id:
            self._die(now=True)
            return 0
        dbname, collname = self._namespace()
        cmd = get_more_command(self._id, collname, self._batch_size, self._max_await_time_ms,
                               self._comment)
        try:
            reply = self._runner().run(dbname, cmd, codec_options=self._codec_options,
                                       session=self._session)
        except OperationFailure as exc:
            if exc.code in CURSOR_CLOSED_ERRORS:
                self._killed = True
            self.close()
            raise
        except BaseException:
            self.close()
            raise
        cursor = reply["cursor"]
        self._post_batch_resume_token = cursor.get("postBatchResumeToken")
        self._id = cursor["id"]
        self._take_batch(cursor["nextBatch"])
        if self._id == 0:
            self.close()
        return len(self._data)
