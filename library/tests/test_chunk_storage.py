"""Where PostgreSQL keeps a chunk's columns (migrations 0007 and 0014): the vector and the
full-text vector in the row, which the search reads for every chunk it tests, rather than
in the TOAST table, from which every read would fetch them back."""

from django.db import connection
from django.utils import lorem_ipsum

from library.models import Chunk

# A chunk as the chunker cuts them: 420 words.
TEXT = lorem_ipsum.words(420, common=False)


def storage(column: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attstorage FROM pg_attribute "
            "WHERE attrelid = 'library_chunk'::regclass AND attname = %s",
            [column],
        )
        return cursor.fetchone()[0]


def kept_out_of_the_row(chunk: Chunk) -> dict[str, bool]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_toast_chunk_id(embedding) IS NOT NULL, "
            "pg_column_toast_chunk_id(search_vector) IS NOT NULL, pg_column_size(search_vector) "
            "FROM library_chunk WHERE id = %s",
            [chunk.pk],
        )
        embedding, search_vector, size = cursor.fetchone()
    assert size > 1500, size  # large enough that PostgreSQL's default would move it out
    return {"embedding": embedding, "search_vector": search_vector}


def test_a_chunks_vectors_stay_in_its_row(notebook, add_ready_source, fake_openai):
    assert storage("embedding") == storage("search_vector") == "m"  # MAIN
    source = add_ready_source(notebook, TEXT.encode(), "long.txt")
    chunk = Chunk.objects.get(source=source)

    assert kept_out_of_the_row(chunk) == {"embedding": False, "search_vector": False}

    # The check can tell: under PostgreSQL's default the same full-text vector goes to the
    # TOAST table (rolled back with the test).
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE library_chunk ALTER COLUMN search_vector SET STORAGE EXTENDED")
        cursor.execute(
            "UPDATE library_chunk SET search_vector = search_vector || ''::tsvector WHERE id = %s",
            [chunk.pk],
        )
    assert kept_out_of_the_row(chunk)["search_vector"] is True
