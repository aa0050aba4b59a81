"""Command tests run through commands.dispatch on both storage engines (the `engine` fixture)."""
from __future__ import annotations

import pytest
from support.runner import Runner


@pytest.fixture
def run(engine):
    """Commands against database `test`."""
    return Runner(engine)


@pytest.fixture
def admin(engine):
    """Commands against database `admin`."""
    return Runner(engine, db="admin")
