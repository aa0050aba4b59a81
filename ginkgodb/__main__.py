"""`python -m ginkgodb ...`: the `ginkgodb` command (the cluster starts its members so)."""
from __future__ import annotations

from .cli import main

raise SystemExit(main())
