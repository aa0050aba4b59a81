from __future__ import annotations

import pytest
from support.client_fakes import FakeChannel

from ginkgodb.client import MongoClient


@pytest.fixture
def channel() -> FakeChannel:
    return FakeChannel()


@pytest.fixture
def client(channel: FakeChannel):
    c = MongoClient(_channel=channel)
    yield c
    c.close()


@pytest.fixture
def coll(client: MongoClient):
    return client.db.coll
