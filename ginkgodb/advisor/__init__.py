"""`ginkgodb advise`: the seeds' schema-design rules checked against a deployment's data and
workload, with capacity estimates (docs/advisor.md).

A front end: it reads only through a pymongo-shaped client (the embedded one for a data
directory, pymongo for a server), so it works against ginkgodb and against mongod.
`collect` gathers the facts (sampled documents, sizes, indexes and their accesses, query
shapes, `top`, the profiler's entries), `rules` turns facts into findings, `render` writes
text, JSON or HTML.
"""
from __future__ import annotations

from .collect import Options, collect
from .findings import Finding, Report
from .report import advise

__all__ = ["Finding", "Options", "Report", "advise", "collect"]
