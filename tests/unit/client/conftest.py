from __future__ import annotations

import pytest

from ginkgodb.client import MongoClient
from support.client_fakes import FakeChannel


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
