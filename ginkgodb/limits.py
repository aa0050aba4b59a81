"""Size limits mongod enforces and reports in `hello`, defined once for every layer.

A ground-floor module: it imports nothing of ginkgodb, so bsonutil, storage, wire and everything above may
use it. DO NOT change casually: drivers size their batches from the hello reply.
"""
from __future__ import annotations

import os

#: largest user document (hello's maxBsonObjectSize; mongod's BSONObjMaxUserSize)
MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024
#: what a stored or wire object may exceed the user limit by: a max-size user document must fit
#: inside a command body or an update's result, so mongod allows 16 KiB of slack
INTERNAL_BSON_SLACK = 16 * 1024
#: largest BSON object the server accepts in a message (mongod's BSONObjMaxInternalSize)
MAX_INTERNAL_BSON_SIZE = MAX_BSON_OBJECT_SIZE + INTERNAL_BSON_SLACK
#: largest whole message, header included (hello's maxMessageSizeBytes)
MAX_MESSAGE_SIZE = 48_000_000
#: most write statements in one insert/update/delete command (hello's maxWriteBatchSize)
MAX_WRITE_BATCH_SIZE = 100_000


#: the disk space an LMDB data directory keeps preallocated past its data, so that deletes and
#: drops still run on a full disk (storage/disk_space.py): 16 MiB, or GINKGODB_DISK_RESERVE_MB
#: (the test suite sets 1: its thousands of data directories would take 20 MB each)
DISK_RESERVE_MB = int(os.environ.get("GINKGODB_DISK_RESERVE_MB", "16"))
