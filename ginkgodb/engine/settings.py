"""Engine-wide settings that server parameters tune (commands/server_parameters.py sets them)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class EngineSettings:
    transaction_lifetime_limit_seconds: float = 60.0   # mongod's transactionLifetimeLimitSeconds
    logical_session_timeout_minutes: int = 30           # mongod's logicalSessionTimeoutMinutes
    #: mongod's internalQueryStatsRateLimit: the queries $queryStats records, -1 every one (the
    #: default here, so the statistics stay on; mongod's is 0), 0 none, N > 0 at most N a second
    query_stats_rate_limit: int = -1


SETTINGS = EngineSettings()
