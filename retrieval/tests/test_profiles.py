"""One profile per embedding model (retrieval/profiles.py), read by the search, the windows
and the coverage judgement."""

from providers import local_e5, local_fuse
from retrieval import profiles, windows
from retrieval.search import _dense_weight


def test_the_similarity_floor_defaults_per_model_unless_set(settings, db):
    settings.SIMILARITY_FLOOR = -1.0
    settings.OPENAI_BASE_URL = ""
    assert profiles.similarity_floor() == 0.80
    assert profiles.similarity_floor(local_fuse.MODEL_NAME) == 0.05

    settings.OPENAI_BASE_URL = "http://127.0.0.1:1/v1"
    settings.EMBEDDING_MODEL = "text-embedding-3-small"
    assert profiles.similarity_floor() == 0.3

    settings.SIMILARITY_FLOOR = 0.5
    assert profiles.similarity_floor() == 0.5
    assert profiles.similarity_floor(local_e5.MODEL_NAME) == 0.5


def test_the_dense_share_is_the_models_own_with_and_without_windows():
    assert _dense_weight(local_e5.MODEL_NAME, use_windows=True) == 0.5
    assert _dense_weight(local_e5.MODEL_NAME, use_windows=False) == 0.4
    assert _dense_weight(local_fuse.MODEL_NAME, use_windows=False) == 0.2
    # Not measured with windows: the share of a model not measured at all.
    assert _dense_weight(local_fuse.MODEL_NAME, use_windows=True) == 0.3
    assert _dense_weight("text-embedding-3-small", use_windows=False) == 0.3


def test_only_e5_is_searched_from_the_centre_with_places_for_the_closest_in_meaning():
    e5 = profiles.profile(local_e5.MODEL_NAME)
    assert (e5.centred, e5.dense_places) == (True, 2)
    # Not measured: plain cosine similarities and the fused order alone.
    for model in (local_fuse.MODEL_NAME, "text-embedding-3-small"):
        assert (profiles.profile(model).centred, profiles.profile(model).dense_places) == (
            False,
            0,
        )


def test_local_windows_are_made_for_the_models_measured_with_them(settings):
    settings.RETRIEVAL_WINDOWS = "local"
    assert profiles.windowed_models() == [local_e5.MODEL_NAME]
    assert windows.enabled_for(local_e5.MODEL_NAME)
    assert not windows.enabled_for(local_fuse.MODEL_NAME)
    assert not windows.enabled_for("text-embedding-3-small")

    settings.RETRIEVAL_WINDOWS = "on"
    assert windows.enabled_for("text-embedding-3-small")


def test_only_a_measured_model_is_judged_by_its_similarity():
    assert profiles.profile(local_e5.MODEL_NAME).covered_similarity == 0.85
    assert profiles.profile(local_fuse.MODEL_NAME).covered_similarity is None
    assert profiles.profile("text-embedding-3-small") is profiles.DEFAULT
