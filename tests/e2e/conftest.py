"""End-to-end fixtures: one `ginkgodb serve` process per session on a free port, and the Node.js
programs (drivers, Mongoose, mongo-express) when they can be installed."""
from __future__ import annotations

import pymongo
import pytest
from e2e.npm_tools import DRIVERS, GUI, MONGOOSE, ensure_packages

from ginkgodb.server.testing import running_server


@pytest.fixture(scope="session")
def server_address(tmp_path_factory):
    path = tmp_path_factory.mktemp("ginkgo-e2e") / "data"
    with running_server(str(path), subprocess=True, quiet=True) as address:
        yield address


@pytest.fixture(scope="session")
def server_uri(server_address):
    host, port = server_address
    return f"mongodb://{host}:{port}"


@pytest.fixture
def client(server_address):
    c = pymongo.MongoClient(*server_address, serverSelectionTimeoutMS=5000)
    yield c
    c.close()


@pytest.fixture
def db(client, request):
    """A fresh database per test, dropped afterwards."""
    name = "e2e_" + request.node.name.replace("[", "_").replace("]", "")[:50]
    client.drop_database(name)
    yield client[name]
    client.drop_database(name)


@pytest.fixture(scope="session")
def node_modules():
    return ensure_packages(DRIVERS)


@pytest.fixture(scope="session")
def mongoose_modules():
    return ensure_packages(MONGOOSE)


@pytest.fixture(scope="session")
def gui_modules():
    return ensure_packages(GUI)
