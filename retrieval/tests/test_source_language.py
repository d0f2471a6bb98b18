from django.db import connection

from library.languages import detect_language, search_config
from library.models import Chunk

GERMAN = (
    "Die Graureiher warten am Rand des Teiches, bis ein Fisch vorbeischwimmt. "
    "Im Winter ziehen viele von ihnen in wärmere Gegenden."
).encode()


def test_a_sources_language_is_detected_at_ingest_and_its_chunks_stemmed_in_it(
    fake_openai, notebook, add_ready_source
):
    source = add_ready_source(notebook, GERMAN, "reiher.txt")

    assert (source.language, source.search_config) == ("de", "german")
    chunk = Chunk.objects.get(source=source)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT search_vector @@ to_tsquery('german', 'Teich') FROM library_chunk "
            "WHERE id = %s",
            [chunk.pk],
        )
        assert cursor.fetchone() == (True,)


def test_languages_map_to_postgres_configurations_and_others_to_simple():
    assert detect_language("The grey herons wait at the edge of the pond.") == "en"
    assert detect_language("Les hérons cendrés attendent au bord de l'étang.") == "fr"
    assert detect_language("ok") == ""
    assert search_config("de") == "german"
    assert search_config("en") == "english"
    assert search_config("") == "simple"
    assert search_config("la") == "simple"


def test_every_mapped_configuration_exists_in_postgres(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT cfgname FROM pg_ts_config")
        installed = {name for (name,) in cursor.fetchall()}
    assert {search_config(code) for code in ("de", "en", "fr", "es", "ru", "nb", "")} <= installed
    from library.languages import SEARCH_CONFIGS

    assert set(SEARCH_CONFIGS.values()) <= installed
