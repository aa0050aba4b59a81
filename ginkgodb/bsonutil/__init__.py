"""Pure value model over pymongo's bson: type brackets, comparison, paths, key codec."""
