"""Version constants, in a ground-floor module any layer may import (ginkgodb re-exports them)."""
from __future__ import annotations

__version__ = "0.1.0"
#: the MongoDB release whose behaviour we follow (buildInfo reports this)
MONGODB_VERSION = "7.0.14"
