"""query layer."""
