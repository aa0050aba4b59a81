"""Which commands are retryable writes and which end a transaction: one list for the session
rules (transactions.py), the error labels (error_labels.py) and the fail points (fail_points.py)."""
from __future__ import annotations

#: commands that may carry txnNumber without autocommit (retryable writes)
RETRYABLE_WRITES = frozenset({"insert", "update", "delete", "findAndModify", "findandmodify"})
#: commands that end a multi-document transaction
FINISHERS = frozenset({"commitTransaction", "abortTransaction"})
