"""What the API's tests share: tokens and a client that sends one."""

from __future__ import annotations

import pytest

from api.tokens import create_token
from billing.services import balance, grant_credit


@pytest.fixture
def write_token(owner) -> str:
    return create_token(user=owner, name="script", scope="write").secret


@pytest.fixture
def read_token(owner) -> str:
    return create_token(user=owner, name="reader", scope="read").secret


class TokenClient:
    """Django's test client with `Authorization: Bearer <token>` on every request."""

    def __init__(self, client, token: str) -> None:
        self.client = client
        self.headers = {"Authorization": f"Bearer {token}"}

    def get(self, path, data=None, **extra):
        return self.client.get(path, data, headers=self.headers, **extra)

    def post(self, path, data=None, content_type="application/json", **extra):
        return self.client.post(
            path, data, content_type=content_type, headers=self.headers, **extra
        )

    def put(self, path, data=None, **extra):
        return self.client.put(
            path, data, content_type="application/json", headers=self.headers, **extra
        )

    def patch(self, path, data=None, **extra):
        return self.client.patch(
            path, data, content_type="application/json", headers=self.headers, **extra
        )

    def delete(self, path, **extra):
        return self.client.delete(path, headers=self.headers, **extra)

    def upload(self, path, files: dict, data: dict | None = None):
        return self.client.post(path, {**files, **(data or {})}, headers=self.headers)


@pytest.fixture
def api(client, write_token) -> TokenClient:
    """The owner's write token."""
    return TokenClient(client, write_token)


@pytest.fixture
def spend_all_credit():
    def spend(user) -> None:
        grant_credit(user=user, amount=-balance(user), reason="spent in a test")

    return spend


@pytest.fixture
def library(fake_openai, notebook, add_ready_source):
    """Three ready sources in the owner's notebook, embedded by the fake model server."""
    from generation.tests.passages import BREAD, HERONS, TRAINS

    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, BREAD, "bread.txt"),
    ]
