"""Engine-wide settings that server parameters tune (commands/server_parameters.py sets them)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class EngineSettings:
    transaction_lifetime_limit_seconds: float = 60.0   # mongod's transactionLifetimeLimitSeconds
    logical_session_timeout_minutes: int = 30           # mongod's logicalSessionTimeoutMinutes


SETTINGS = EngineSettings()
