"""The settings every client object carries: codec options, read preference, write and read
concern. MongoClient, Database and Collection inherit them down the chain (each level may
override), as in pymongo.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from bson.codec_options import CodecOptions
from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import _ServerMode
from pymongo.write_concern import DEFAULT_WRITE_CONCERN, WriteConcern


class SettingsHolder:
    """Read-only codec/read/write settings with pymongo's type checks."""

    def __init__(self, codec_options: CodecOptions, read_preference: _ServerMode,
                 write_concern: WriteConcern, read_concern: ReadConcern) -> None:
        if not isinstance(codec_options, CodecOptions):
            raise TypeError("codec_options must be an instance of bson.codec_options.CodecOptions")
        if not isinstance(read_preference, _ServerMode):
            raise TypeError(f"{read_preference!r} is not valid for read_preference. See "
                            "pymongo.read_preferences for valid options.")
        if not isinstance(write_concern, WriteConcern):
            raise TypeError("write_concern must be an instance of pymongo.write_concern.WriteConcern, "
                            f"not {type(write_concern)}")
        if not isinstance(read_concern, ReadConcern):
            raise TypeError("read_concern must be an instance of pymongo.read_concern.ReadConcern, "
                            f"not {type(read_concern)}")
        self._codec_options = codec_options
        self._read_preference = read_preference
        self._write_concern = write_concern
        self._read_concern = read_concern

    @property
    def codec_options(self) -> CodecOptions:
        return self._codec_options

    @property
    def read_preference(self) -> _ServerMode:
        """Kept for pymongo compatibility: one embedded node serves every read."""
        return self._read_preference

    @property
    def write_concern(self) -> WriteConcern:
        return self._write_concern

    @property
    def read_concern(self) -> ReadConcern:
        return self._read_concern

    def _write_concern_for(self, session: Any) -> WriteConcern:
        """Inside a transaction the per-operation write concern is the server default."""
        if session is not None and getattr(session, "in_transaction", False):
            return DEFAULT_WRITE_CONCERN
        return self._write_concern

    def _write_concern_for_cmd(self, cmd: Mapping[str, Any], session: Any) -> WriteConcern:
        raw = cmd.get("writeConcern")
        if raw is not None:
            return WriteConcern(**raw)
        return self._write_concern_for(session)

    def _settings_or_own(self, codec_options: Optional[CodecOptions],
                         read_preference: Optional[_ServerMode],
                         write_concern: Optional[WriteConcern],
                         read_concern: Optional[ReadConcern]) -> tuple:
        return (codec_options or self._codec_options, read_preference or self._read_preference,
                write_concern or self._write_concern, read_concern or self._read_concern)
