"""Size limits mongod enforces on the wire (and reports in `hello`). DO NOT change casually:
drivers size their batches from the hello reply."""
from __future__ import annotations

#: largest user document (hello's maxBsonObjectSize)
MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024
#: largest BSON object the server accepts in a message: a max-size user document must fit
#: inside a command body, so mongod allows 16 KiB of slack (BSONObjMaxInternalSize)
MAX_INTERNAL_BSON_SIZE = MAX_BSON_OBJECT_SIZE + 16 * 1024
#: largest whole message, header included (hello's maxMessageSizeBytes)
MAX_MESSAGE_SIZE = 48_000_000
#: most write statements in one insert/update/delete command (hello's maxWriteBatchSize)
MAX_WRITE_BATCH_SIZE = 100_000
