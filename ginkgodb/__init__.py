"""ginkgodb: a MongoDB-compatible document database, embedded (pymongo's API) or as a server."""
from __future__ import annotations

__version__ = "0.1.0"
#: the MongoDB release whose behaviour we follow (buildInfo reports this)
MONGODB_VERSION = "7.0.14"


def __getattr__(name: str):
    # The client imports the whole stack; keep `import ginkgodb` cheap for the CLI and the wire codec.
    if name in {"MongoClient"}:
        from .client import MongoClient
        return MongoClient
    raise AttributeError(name)


__all__ = ["MongoClient", "__version__"]
