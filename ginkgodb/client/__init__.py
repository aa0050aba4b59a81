"""The embedded client: pymongo's API (MongoClient, Database, Collection, cursors) over
`commands.dispatch`, with no network in between.

    from ginkgodb import MongoClient
    client = MongoClient("./data")          # or MongoClient() for an in-memory database
    client.shop.orders.insert_one({"sku": "x", "qty": 2})
"""
from __future__ import annotations

from .client import MongoClient
from .collection import Collection, ReturnDocument
from .command_cursor import CommandCursor
from .cursor import Cursor
from .database import Database
from .session import ClientSession

__all__ = ["MongoClient", "Database", "Collection", "Cursor", "CommandCursor", "ClientSession",
           "ReturnDocument"]
