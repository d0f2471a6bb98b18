"""Fixtures shared by every app's tests: an owner, an outsider who must see nothing of
the owner's, and a notebook."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from notebooks.models import Notebook


@pytest.fixture
def owner(db):
    return get_user_model().objects.create_user(username="owner", password="owner-pass-123")


@pytest.fixture
def outsider(db):
    return get_user_model().objects.create_user(username="outsider", password="outsider-pass-123")


@pytest.fixture
def notebook(owner):
    return Notebook.objects.create(owner=owner, title="Research")


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """Uploaded files go to a per-test folder, never into the developer's var/uploads."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def english_between_tests():
    """Each test starts in the default language: a German request leaves German active in
    its thread (LocaleMiddleware activates, nothing deactivates), and messages made later
    by services would be German."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def embedding_batches_start_afresh():
    """A worker remembers how large its model's batches grew (ingest/services/embedding.py);
    each test starts from INGEST_EMBED_CHUNKS, whatever the tests before it embedded."""
    from ingest.services import forget_batch_sizes

    forget_batch_sizes()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # PBKDF2's deliberate slowness costs ~0.4 s per user created; tests need no security.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def fake_openai(settings):
    """A real OpenAI-compatible server on 127.0.0.1 with the settings pointing at it.

    Yields the controller: `fake_openai.chat_replies.append("… [1]")`,
    `fake_openai.fail_next("500", times=2)`, `fake_openai.requests`.
    """
    from providers.tests.fake_openai import FakeOpenAI

    with FakeOpenAI.running() as server:
        settings.OPENAI_BASE_URL = server.base_url
        settings.OPENAI_API_KEY = "test"
        settings.CHAT_MODEL = "fake-chat"
        # A summary call per source would take the chat replies tests script for answers;
        # the tests of LLM summaries switch it back to "auto".
        settings.SOURCE_SUMMARIES = "extractive"
        settings.EMBEDDING_MODEL = "fake-embed"
        settings.STT_MODEL = "fake-stt"
        settings.TTS_MODEL = "fake-tts"
        settings.TTS_VOICES = ["fake-voice-a", "fake-voice-b"]
        settings.EMBEDDING_DIMENSIONS = 64
        settings.OPENAI_MAX_RETRIES = 1
        settings.OPENAI_TIMEOUT_SECONDS = 10.0
        settings.CHAT_TIMEOUT_SECONDS = 10.0
        settings.CHAT_FIRST_TOKEN_SECONDS = 10.0
        settings.CHAT_IDLE_SECONDS = 10.0
        # The fake vectors have no negative component, so every similarity is >= 0 and a
        # floor of 0 passes every chunk (up to k), whatever words the hashes collide on.
        settings.SIMILARITY_FLOOR = 0.0
        # Every model the fake serves has a price, as the start-up check demands.
        settings.MODEL_PRICES = {
            **settings.MODEL_PRICES,
            "fake-chat": {"input_per_million": "2", "output_per_million": "8"},
            "fake-embed": {"input_per_million": "0.1"},
            "fake-vision": {"input_per_million": "2", "output_per_million": "8"},
            "fake-stt": {"per_second": "0.001"},
            "fake-tts": {"per_second": "0.002"},
        }
        yield server


@pytest.fixture
def add_ready_source(db):
    """Add bytes to a notebook and process them in this process; returns the ready source.

    Uses whichever embedding model the settings select (the fake server with `fake_openai`).
    """
    from django.core.files.base import ContentFile

    from ingest.services import add_source, process_source

    def add(notebook, content: bytes, name: str = "notes.txt"):
        added = add_source(
            owner=notebook.owner, notebook=notebook, upload=ContentFile(content, name=name)
        )
        source = process_source(source_id=added.source.pk)
        assert source.status == "ready", source.error
        return source

    return add
