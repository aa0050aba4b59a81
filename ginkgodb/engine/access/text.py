"""The text access method (textIndexVersion 3): a document's entries are one key per distinct
term (prefix values, term, score, suffix values; key format 1 of docs/design/text-index.md),
written and removed with the document by the IndexEntries base.

Text indexes serve only `$text` (planner/text_plans.py and engine/text_search.py), never an
ordinary predicate or sort, as in mongod.
"""
from __future__ import annotations

from functools import cached_property
from typing import Any, Optional

from ...errors import CommandError, ErrorCode
from ...query.text import TEXT_KEY_FORMAT_VERSION, TextIndexSpec, index_keys, normalize_text_index_spec
from ..catalog_entries import IndexMeta
from ..text_build import BUILD_OPTION
from ..text_synonyms import SYNONYMS_OPTION
from .entries import IndexEntries

#: the options a text index stores beside its key (part of what makes two text indexes equal)
TEXT_OPTIONS = ("weights", "default_language", "language_override", "textIndexVersion")
#: recorded in the catalog entry (not shown by listIndexes) so a later key layout is detected
FORMAT_OPTION = "textKeyFormat"


class TextAccess(IndexEntries):
    kind = "text"

    def __init__(self, meta: IndexMeta, ns: str) -> None:
        super().__init__(meta, ns)
        version = meta.options.get(FORMAT_OPTION, TEXT_KEY_FORMAT_VERSION)
        if version != TEXT_KEY_FORMAT_VERSION:
            raise CommandError(ErrorCode.NotImplemented,
                               f"text index {meta.name} uses key format {version}; rebuild it")
        # the language override and the weighted paths are read too (the wildcard reads anything)
        self._roots = None

    @cached_property
    def spec(self) -> TextIndexSpec:
        return TextIndexSpec.from_stored(stored_spec(self.meta))

    def document_keys(self, doc: dict) -> tuple[list[bytes], set]:
        return index_keys(self.spec, doc), set()

    # -- the planner's side: only $text, planned by planner.text_plans ---------------------------
    def usable(self, query: Any) -> bool:
        return False

    def plan(self, query: Any, sort: list) -> Optional[Any]:
        return None

    def hinted(self, query: Any, sort: list) -> Any:
        raise CommandError(ErrorCode.BadValue, "hint provided does not correspond to an existing index")

    @staticmethod
    def check_spec(key: dict, options: dict) -> None:
        """Checked by `normalize` (createIndexes stores the normalised spec)."""

    @staticmethod
    def normalize(name: str, key: dict, options: dict) -> tuple[dict, dict]:
        """(key, options) as mongod stores a text index: `{_fts: "text", _ftsx: 1}` in place of
        the text fields, with weights, default_language, language_override, textIndexVersion."""
        if options.get("unique"):
            raise CommandError(ErrorCode.NotImplemented, "unique text indexes are not supported by ginkgodb")
        coll = options.get("collation")
        if isinstance(coll, dict) and coll.get("locale") != "simple":
            from ...bsonutil.shell_format import format_document
            raise CommandError(ErrorCode.CannotCreateIndex,
                               f"Index type 'text' does not support collation: {format_document(coll)}")
        options = dict(options)
        # the ginkgodb extensions, checked by createIndexes (which knows the database)
        extensions = {k: options.pop(k) for k in (SYNONYMS_OPTION, BUILD_OPTION) if k in options}
        stored = normalize_text_index_spec({"key": key, "name": name, **options})
        stored.pop("name", None)
        stored.pop("v", None)
        fixed = stored.pop("key")
        stored[FORMAT_OPTION] = TEXT_KEY_FORMAT_VERSION
        stored.update(extensions)
        return fixed, stored


def stored_spec(meta: IndexMeta) -> dict:
    """The spec the text core parses: the key and the text options."""
    return {"key": dict(meta.key), **{k: meta.options[k] for k in TEXT_OPTIONS if k in meta.options}}
