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


@pytest.fixture(scope="session")
def live_server_url(django_db_setup, django_db_blocker, tmp_path_factory):
    """Loupe under uvicorn on the test database, with its own fake model server."""
    from django.db import connection

    from api.tests.live import server_env, serving
    from ops.tests.stack import database_url
    from providers.tests.fake_openai import FakeOpenAI

    with django_db_blocker.unblock():
        database = database_url(connection.settings_dict)
    data_dir = tmp_path_factory.mktemp("live-api")
    with FakeOpenAI.running() as models:
        env = server_env(database=database, models_url=models.base_url, data_dir=data_dir)
        with serving(env, data_dir / "uvicorn.log") as url:
            yield url, models


@pytest.fixture
def live(live_server_url, transactional_db, settings, tmp_path):
    """The live server for one test, this process's settings pointing at its model server
    (so that sources made here are embedded as the server embeds questions)."""
    url, models = live_server_url
    settings.OPENAI_BASE_URL = models.base_url
    settings.OPENAI_API_KEY = "test"
    settings.CHAT_MODEL = "fake-chat"
    settings.SOURCE_SUMMARIES = "extractive"
    settings.EMBEDDING_MODEL = "fake-embed"
    settings.EMBEDDING_DIMENSIONS = 64
    settings.SIMILARITY_FLOOR = 0.0
    settings.MODEL_PRICES = {
        **settings.MODEL_PRICES,
        "fake-chat": {"input_per_million": "2", "output_per_million": "8"},
        "fake-embed": {"input_per_million": "0.1"},
    }
    models.chat_replies.clear()
    models.stream_delay = 0.0
    yield url, models
    models.chat_replies.clear()


@pytest.fixture
def live_library(live, owner, notebook, add_ready_source):
    from generation.tests.passages import BREAD, HERONS, TRAINS

    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, BREAD, "bread.txt"),
    ]
