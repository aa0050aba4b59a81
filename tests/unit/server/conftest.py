"""Fixtures shared by the server's tests."""
from __future__ import annotations

import pytest

from ginkgodb.server.protocol import ConnectionProtocol


@pytest.fixture
def in_worker(monkeypatch):
    """The names of the commands that ran in a worker thread, in order (the others ran on the
    event loop)."""
    ran: list[str] = []
    submit = ConnectionProtocol.submit

    def counting(self, job):
        ran.append(job.request.name)
        return submit(self, job)
    monkeypatch.setattr(ConnectionProtocol, "submit", counting)
    return ran
