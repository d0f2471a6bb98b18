import math

import pytest

from billing.models import Usage
from billing.prices import price_for
from library import embedding_state
from library.models import Chunk
from providers import embeddings, local_fuse
from providers.checks import model_configuration
from retrieval.services import retrieve

pytestmark = pytest.mark.local_models


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_the_model_returns_normalised_512_dimension_vectors():
    vectors, tokens = local_fuse.embed_passages(["Die Katze schläft auf dem Sofa.", "Hello."])

    assert [len(vector) for vector in vectors] == [local_fuse.DIMENSIONS] * 2 == [512, 512]
    assert all(math.isclose(cosine(v, v), 1.0, abs_tol=1e-4) for v in vectors)
    assert tokens > 0


def test_a_matching_german_passage_ranks_above_an_unrelated_one():
    (cat, train), _ = local_fuse.embed_passages(
        [
            "Die Katze schläft den ganzen Nachmittag auf dem Sofa.",
            "Der Zug nach Berlin hat Verspätung.",
        ]
    )
    query, tokens = local_fuse.embed_query("Wo schläft die Katze?")

    assert cosine(query, cat) > cosine(query, train)
    assert tokens > 0


def test_embedding_model_selects_it_without_a_model_server(settings, owner):
    settings.OPENAI_BASE_URL = ""
    settings.EMBEDDING_MODEL = local_fuse.MODEL_NAME

    vectors = embeddings.embed_texts(
        ["Grey herons wait by the pond."], user=owner, model=embeddings.configured_model()
    )

    assert embedding_state.active_model() == local_fuse.MODEL_NAME
    assert len(vectors[0]) == 512
    usage = Usage.objects.get()
    assert (usage.kind, usage.model, usage.user) == ("embedding", local_fuse.MODEL_NAME, owner)
    assert usage.input_tokens > 0
    assert price_for(local_fuse.MODEL_NAME) is not None  # priced (at zero): no start-up error


def test_it_embeds_locally_while_a_model_server_serves_the_rest(fake_openai, owner, settings):
    settings.EMBEDDING_MODEL = local_fuse.MODEL_NAME

    vector = embeddings.embed_query(
        "Where do herons wait?", user=owner, model=embeddings.configured_model()
    )

    assert len(vector) == 512
    assert fake_openai.embedding_requests == []
    assert model_configuration(None) == []


def test_a_source_embedded_by_it_is_found_by_a_question(settings, notebook, add_ready_source):
    settings.OPENAI_BASE_URL = ""
    settings.EMBEDDING_MODEL = local_fuse.MODEL_NAME
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 30, 0
    text = (
        "Grey herons stand motionless in shallow water and wait for fish to pass. "
        "They nest in colonies high in the trees near lakes and rivers. "
        "Sourdough bread rises slowly because wild yeast and lactic bacteria ferment the "
        "flour for many hours before the loaf is baked in a hot oven. "
        "Night trains leave the central station after ten and reach the coast by morning, "
        "with sleeping cars and a dining carriage."
    )
    source = add_ready_source(notebook, text.encode())

    hits = retrieve(user=notebook.owner, notebook=notebook, question="How is sourdough made?")

    assert {chunk.embedding_model for chunk in Chunk.objects.filter(source=source)} == {
        local_fuse.MODEL_NAME
    }
    assert "Sourdough" in hits[0].chunk.text


def test_an_unknown_embedding_model_without_a_model_server_warns(settings):
    settings.OPENAI_BASE_URL = ""
    settings.EMBEDDING_MODEL = "text-embedding-3-small"

    warnings = model_configuration(None)

    assert [warning.id for warning in warnings] == ["providers.W001"]
    assert local_fuse.MODEL_NAME in warnings[0].hint
    assert embeddings.configured_model().name == embeddings.LOCAL_DEFAULT
