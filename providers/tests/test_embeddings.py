import math

import pytest
from django.core import checks

from billing.models import Usage
from library import embedding_state
from providers import embeddings, local_e5
from providers.checks import model_configuration
from providers.errors import ProviderError
from providers.tests.fake_openai import fake_embedding

TEXTS = ["grey herons", "night trains", "sourdough bread", "pond ice", "herons again"]


def test_texts_are_embedded_in_batches_each_metered(fake_openai, owner, settings):
    settings.EMBEDDING_BATCH_SIZE = 2
    progress = []

    vectors = embeddings.embed_texts(
        TEXTS,
        user=owner,
        on_progress=lambda done, total: progress.append((done, total)),
        model=embeddings.configured_model(),
    )

    # Sent at once (EMBEDDING_CONCURRENT_REQUESTS), so they may arrive in any order.
    assert sorted(len(r.body["input"]) for r in fake_openai.embedding_requests) == [1, 2, 2]
    assert vectors == [pytest.approx(fake_embedding(text, 64)) for text in TEXTS]
    assert progress == [(2, 5), (4, 5), (5, 5)]
    usage = list(Usage.objects.order_by("id"))
    assert [(row.kind, row.model, row.user) for row in usage] == [
        ("embedding", "fake-embed", owner)
    ] * 3
    assert [row.input_tokens for row in usage] == [4, 4, 2]


def test_a_long_sources_batches_are_sent_at_once_and_come_back_in_order(
    fake_openai, owner, settings
):
    settings.EMBEDDING_BATCH_SIZE = 1
    settings.EMBEDDING_CONCURRENT_REQUESTS = 4
    fake_openai.slow_seconds = 2.0
    fake_openai.fail_next("slow", times=4, endpoint="embeddings")

    vectors = embeddings.embed_texts(TEXTS[:4], user=owner, model=embeddings.configured_model())

    # Each of the four was answered after 2 s; all four had arrived before the first answer.
    arrivals = sorted(request.received_at for request in fake_openai.embedding_requests)
    assert len(arrivals) == 4
    assert arrivals[-1] - arrivals[0] < fake_openai.slow_seconds
    assert vectors == [pytest.approx(fake_embedding(text, 64)) for text in TEXTS[:4]]
    assert Usage.objects.filter(kind="embedding", user=owner).count() == 4


def test_one_at_a_time_when_concurrent_requests_is_one(fake_openai, owner, settings):
    settings.EMBEDDING_BATCH_SIZE = 2
    settings.EMBEDDING_CONCURRENT_REQUESTS = 1

    embeddings.embed_texts(TEXTS, user=owner, model=embeddings.configured_model())

    assert [len(r.body["input"]) for r in fake_openai.embedding_requests] == [2, 2, 1]


def test_a_failed_batch_among_concurrent_ones_fails_and_bills_the_answered_ones(
    fake_openai, owner, settings
):
    settings.EMBEDDING_BATCH_SIZE = 1
    settings.EMBEDDING_CONCURRENT_REQUESTS = 4
    settings.OPENAI_MAX_RETRIES = 0
    fake_openai.fail_next("500", endpoint="embeddings", skip=2)

    with pytest.raises(ProviderError):
        embeddings.embed_texts(TEXTS[:4], user=owner, model=embeddings.configured_model())

    answered = [r for r in fake_openai.embedding_requests if r.answered_with != "500"]
    assert len(answered) == 3
    assert Usage.objects.filter(kind="embedding", user=owner).count() == 3


def test_the_request_names_the_model_and_the_dimensions(fake_openai, db):
    embeddings.embed_query("grey herons", user=None, model=embeddings.configured_model())

    body = fake_openai.embedding_requests[0].body
    assert (body["model"], body["dimensions"], body["input"]) == ("fake-embed", 64, ["grey herons"])


def test_vectors_travel_packed_as_the_client_asks(fake_openai, db):
    """The openai client asks for base64 (packed float32) and unpacks it; the test server
    answers as the real API does, so benchmarks see the real cost (JSON numbers cost half
    a second per 166 vectors of 384 to parse)."""
    vectors = embeddings.embed_texts(TEXTS[:2], user=None, model=embeddings.configured_model())

    assert fake_openai.embedding_requests[0].body.get("encoding_format") == "base64"
    answered = fake_openai.embeddings_response({"input": ["x"], "encoding_format": "base64"})
    assert isinstance(answered["data"][0]["embedding"], str)  # packed, as the real API does
    assert vectors == [pytest.approx(fake_embedding(text, 64), rel=1e-6) for text in TEXTS[:2]]


def test_without_dimensions_the_request_leaves_them_to_the_model(fake_openai, db, settings):
    settings.EMBEDDING_DIMENSIONS = 0

    vector = embeddings.embed_query("grey herons", user=None, model=embeddings.configured_model())

    assert "dimensions" not in fake_openai.embedding_requests[0].body
    assert len(vector) == 64  # the fake server's own default


def test_a_rate_limited_request_is_retried(fake_openai, db):
    fake_openai.fail_next("429")

    vector = embeddings.embed_query("grey herons", user=None, model=embeddings.configured_model())

    assert vector == pytest.approx(fake_embedding("grey herons", 64))
    assert [r.answered_with for r in fake_openai.embedding_requests] == ["429", "ok"]
    assert Usage.objects.count() == 1  # only the answered call is metered


def test_a_server_error_on_every_try_raises_a_provider_error(fake_openai, db):
    fake_openai.fail_next("500", times=2)

    with pytest.raises(ProviderError) as failure:
        embeddings.embed_query("grey herons", user=None, model=embeddings.configured_model())

    assert str(failure.value) == (
        f"The embedding model at {fake_openai.base_url} answered with an error (HTTP 500)."
    )
    assert len(fake_openai.embedding_requests) == 2
    assert Usage.objects.count() == 0


def test_rate_limiting_on_every_try_says_so(fake_openai, db):
    fake_openai.fail_next("429", times=2)

    with pytest.raises(ProviderError, match="rate-limiting"):
        embeddings.embed_query("grey herons", user=None, model=embeddings.configured_model())


def test_a_dimension_mismatch_names_the_setting(fake_openai, db):
    fake_openai.force_dimensions = 32

    with pytest.raises(ProviderError) as failure:
        embeddings.embed_texts(["grey herons"], user=None, model=embeddings.configured_model())

    assert "EMBEDDING_DIMENSIONS is 64" in str(failure.value)
    assert "32 dimensions" in str(failure.value)


def test_a_garbage_response_raises_a_provider_error(fake_openai, db):
    fake_openai.fail_next("garbage")

    with pytest.raises(ProviderError, match="embedding model"):
        embeddings.embed_texts(["grey herons"], user=None, model=embeddings.configured_model())


def test_a_server_too_slow_on_every_try_times_out(fake_openai, db, settings):
    settings.OPENAI_TIMEOUT_SECONDS = 0.3
    fake_openai.slow_seconds = 2
    fake_openai.fail_next("slow", times=2)

    with pytest.raises(ProviderError, match="did not answer in time"):
        embeddings.embed_query("grey herons", user=None, model=embeddings.configured_model())


def test_a_server_that_is_down_cannot_be_reached(db, settings):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    settings.EMBEDDING_MODEL = "fake-embed"
    settings.OPENAI_MAX_RETRIES = 0

    with pytest.raises(ProviderError, match="cannot be reached"):
        embeddings.embed_query("grey herons", user=None, model=embeddings.configured_model())


def test_before_any_vector_is_stored_the_active_model_follows_the_settings(settings, db):
    settings.OPENAI_BASE_URL = ""
    assert embedding_state.active_model() == local_e5.MODEL_NAME

    settings.OPENAI_BASE_URL = "http://127.0.0.1:1/v1"
    settings.EMBEDDING_MODEL = "text-embedding-3-small"
    assert embedding_state.active_model() == "text-embedding-3-small"


def test_a_model_server_without_a_chat_model_fails_the_system_check(settings):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:1/v1"
    settings.CHAT_MODEL = ""
    settings.EMBEDDING_MODEL = "fake-embed"

    errors = [error for error in checks.run_checks() if error.id == "providers.E001"]

    assert [error.msg for error in errors] == ["OPENAI_BASE_URL is set but CHAT_MODEL is not."]


def test_a_model_server_without_an_embedding_model_fails_the_system_check(settings):
    settings.OPENAI_BASE_URL = "http://127.0.0.1:1/v1"
    settings.CHAT_MODEL = "fake-chat"
    settings.EMBEDDING_MODEL = ""

    errors = model_configuration(None)

    assert [error.msg for error in errors] == ["OPENAI_BASE_URL is set but EMBEDDING_MODEL is not."]


def test_the_local_models_need_no_configuration(settings):
    settings.OPENAI_BASE_URL = ""
    settings.CHAT_MODEL = settings.EMBEDDING_MODEL = ""

    assert model_configuration(None) == []


def test_the_fake_servers_vectors_are_unit_length_and_share_words():
    herons, more_herons, trains = (
        fake_embedding(text, 64) for text in ("grey herons", "herons wait", "night trains")
    )

    assert math.isclose(sum(value * value for value in herons), 1.0)
    cosine = sum(a * b for a, b in zip(herons, more_herons, strict=True))
    assert cosine > sum(a * b for a, b in zip(herons, trains, strict=True))
