"""Commands: MongoDB command documents in, reply documents out. The internal API of ginkgodb.

Importing this package registers every command family.
"""
from __future__ import annotations

import importlib
import pkgutil

from .context import CommandContext
from .dispatch import dispatch
from .registry import COMMANDS, command


def _load_families() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name not in {"context", "dispatch", "registry"} and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_load_families()

__all__ = ["CommandContext", "dispatch", "COMMANDS", "command"]
