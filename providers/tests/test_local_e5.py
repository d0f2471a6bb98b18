import math

import pytest

from billing.models import Usage
from providers import embeddings, local_e5

pytestmark = pytest.mark.local_models


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_the_local_model_returns_normalised_384_dimension_vectors():
    vectors, tokens = local_e5.embed_passages(["Die Katze schläft auf dem Sofa.", "Hello."])

    assert [len(vector) for vector in vectors] == [local_e5.DIMENSIONS] * 2 == [384, 384]
    assert all(math.isclose(cosine(v, v), 1.0, abs_tol=1e-4) for v in vectors)
    assert tokens > 0


def test_a_matching_german_passage_ranks_above_an_unrelated_one():
    (cat, train), _ = local_e5.embed_passages(
        [
            "Die Katze schläft den ganzen Nachmittag auf dem Sofa.",
            "Der Zug nach Berlin hat Verspätung.",
        ]
    )
    query, tokens = local_e5.embed_query("Wo schläft die Katze?")

    assert cosine(query, cat) > cosine(query, train)
    assert tokens > 0


def test_without_a_model_server_embeddings_are_local_and_metered(settings, owner):
    settings.OPENAI_BASE_URL = ""

    vectors = embeddings.embed_texts(
        ["Grey herons wait by the pond."], user=owner, model=embeddings.configured_model()
    )

    assert len(vectors[0]) == 384
    usage = Usage.objects.get()
    assert (usage.kind, usage.model, usage.user) == ("embedding", local_e5.MODEL_NAME, owner)
    assert usage.input_tokens > 0
