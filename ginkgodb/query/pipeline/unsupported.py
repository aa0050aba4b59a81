"""Stages not implemented yet: they fail loudly with NotImplemented (238) instead of ignoring."""
from __future__ import annotations

from typing import Any

from ginkgodb.errors import CommandError, ErrorCode

from .core import Env, StageFn, stage

_UNSUPPORTED = ("$geoNear", "$search", "$searchMeta",
                "$vectorSearch", "$changeStreamSplitLargeEvent", "$rankFusion", "$scoreFusion")


def _refuse(name: str) -> None:
    @stage(name)
    def parse(spec: Any, env: Env) -> StageFn:
        raise CommandError(ErrorCode.NotImplemented, f"the {name} stage is not supported by "
                                                     "ginkgodb")


for _name in _UNSUPPORTED:
    _refuse(_name)
