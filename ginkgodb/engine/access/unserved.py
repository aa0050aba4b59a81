"""An index of a kind ginkgodb does not serve, found in a data directory written before
createIndexes refused such kinds: it serves no query, and writes that would need its keys fail
with 238 rather than leave it silently incomplete."""
from __future__ import annotations

from typing import Any, Optional

from ...errors import CommandError, ErrorCode
from .entries import IndexEntries


class UnservedAccess(IndexEntries):
    kind = "unserved"

    def document_keys(self, doc: dict) -> tuple[list[bytes], set]:
        raise CommandError(ErrorCode.NotImplemented,
                           f"index {self.meta.name} of kind {dict(self.meta.key)} is not supported by "
                           "ginkgodb; drop it to write to this collection")

    def usable(self, query: Any) -> bool:
        return False

    def plan(self, query: Any, sort: list) -> Optional[Any]:
        return None

    def hinted(self, query: Any, sort: list) -> Any:
        raise CommandError(ErrorCode.BadValue, f"index {self.meta.name} cannot answer queries")
