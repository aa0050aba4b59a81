"""The query filter language: `compile_filter(spec) -> Matcher`, `matcher(doc) -> bool`.

Modules, one job each: compiler (parsing, Matcher), nodes (compiled node shapes), paths (dotted
paths and array traversal), comparison ($eq/$ne/$gt.../$in/$nin), element ($exists/$type),
evaluation ($regex/$mod/$expr/...), regex (PCRE -> Python re), array ($size/$all/$elemMatch),
logical ($and/$or/$nor/$not), bitwise ($bits*), fastpaths (fused closures for common filters).
"""
from .compiler import Matcher, compile_filter

__all__ = ["Matcher", "compile_filter"]
