"""B-tree access methods: single-field, compound and multikey indexes, and hashed ones."""
from __future__ import annotations

from typing import Any, Optional

from ...bsonutil import keycodec
from ...errors import CommandError, ErrorCode
from ...planner.btree_plans import BtreePlanning
from ...query.index_keys import btree_keys, hashed_keys
from ..catalog_entries import IndexMeta
from .entries import IndexEntries


class BtreeAccess(IndexEntries, BtreePlanning):
    kind = "btree"

    def __init__(self, meta: IndexMeta, ns: str) -> None:
        super().__init__(meta, ns)
        # `_id` and other single ascending top-level fields take a shortcut for scalar values
        field, direction = self.pattern[0]
        self._simple_field = field if (len(self.pattern) == 1 and direction == 1 and "." not in field
                                       and not meta.sparse and self.collation is None) else None
        if self._simple_field is not None and self._partial is None and not meta.multikey_paths:
            self.raw_field = self._simple_field.encode()   # one key per document, from one value

    def keys(self, doc: dict) -> tuple[list[bytes], set]:
        f = self._simple_field
        if f is not None and self._partial is None:
            key = self.simple_key(doc.get(f))
            if key is not None:
                return [key], set()
        return super().keys(doc)

    def simple_key(self, value: Any) -> Optional[bytes]:
        if value is not None and not isinstance(value, (list, dict)):
            return keycodec.encode_key((value,))
        return None

    def document_keys(self, doc: dict) -> tuple[list[bytes], set]:
        return btree_keys(doc, self.pattern, sparse=self.meta.sparse)

    @staticmethod
    def check_spec(key: dict, options: dict) -> None:
        """Nothing beyond the generic key-pattern rules."""


class HashedAccess(BtreeAccess):
    """One key per document: the hashed field's 64-bit hash (equality only, no arrays)."""

    kind = "hashed"

    def __init__(self, meta: IndexMeta, ns: str) -> None:
        super().__init__(meta, ns)
        self._simple_field = self.raw_field = None

    def document_keys(self, doc: dict) -> tuple[list[bytes], set]:
        return hashed_keys(doc, self.pattern, sparse=self.meta.sparse), set()

    @staticmethod
    def check_spec(key: dict, options: dict) -> None:
        kinds = [d for d in key.values() if d == "hashed"]
        if len(kinds) > 1:
            raise CommandError(ErrorCode.IndexMultipleHashedFields,
                               "A maximum of one index field is allowed to be hashed but found 2")
        if options.get("unique"):
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "Currently hashed indexes cannot guarantee uniqueness. Use a regular index.")
