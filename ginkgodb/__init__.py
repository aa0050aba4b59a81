"""ginkgodb: a MongoDB-compatible document database, embedded (pymongo's API) or as a server."""
from __future__ import annotations

from .version import MONGODB_VERSION, __version__


def __getattr__(name: str):
    # The client imports the whole stack; keep `import ginkgodb` cheap for the CLI and the wire codec.
    if name in {"MongoClient"}:
        from .client import MongoClient
        return MongoClient
    raise AttributeError(name)


__all__ = ["MongoClient", "MONGODB_VERSION", "__version__"]
