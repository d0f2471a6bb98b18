from django.core.files.base import ContentFile

from billing.models import Usage
from ingest.services import add_source, process_source
from ingest.tests.data import PDFS
from library.models import Chunk, Source

# About 1000 chunker tokens: three chunks of 420 with an overlap of 50.
LONG_TEXT = " ".join(f"Herons{n % 7} wait by the pond number {n}." for n in range(125)).encode()
CRAZY_ONES = str(PDFS / "pypdf/crazyones.pdf")
FOUR_PAGES = str(PDFS / "sample-files/pdflatex-4-pages.pdf")


def queued_source(owner, notebook, content: bytes = LONG_TEXT, name: str = "herons.txt"):
    upload = ContentFile(content, name=name)
    return add_source(owner=owner, notebook=notebook, upload=upload).source


def read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def test_a_text_source_ends_ready_with_chunks_of_the_active_model(fake_openai, owner, notebook):
    source = queued_source(owner, notebook)

    process_source(source_id=source.pk)

    source.refresh_from_db()
    chunks = list(source.chunks.all())
    assert source.status == Source.Status.READY
    assert source.error == ""
    assert source.page_count is None
    assert source.chunk_count == len(chunks) == 3
    assert (source.progress_done, source.progress_total) == (3, 3)
    assert [chunk.ordinal for chunk in chunks] == [0, 1, 2]
    assert {chunk.embedding_model for chunk in chunks} == {"fake-embed"}
    assert all(len(chunk.embedding) == 64 for chunk in chunks)
    assert chunks[0].text.startswith("Herons0 wait by the pond number 0.")


def test_embedding_calls_write_usage_rows_for_the_owner(fake_openai, owner, notebook, settings):
    settings.EMBEDDING_BATCH_SIZE = 2
    source = queued_source(owner, notebook)

    process_source(source_id=source.pk)

    usage = list(Usage.objects.order_by("id"))
    assert len(fake_openai.embedding_requests) == 2  # three chunks in batches of two
    assert [(row.kind, row.model, row.user) for row in usage] == [
        ("embedding", "fake-embed", owner),
        ("embedding", "fake-embed", owner),
    ]
    assert all(row.input_tokens > 0 for row in usage)


def test_a_pdf_source_records_its_pages(fake_openai, owner, notebook):
    source = queued_source(owner, notebook, read(FOUR_PAGES), "four.pdf")

    process_source(source_id=source.pk)

    source.refresh_from_db()
    assert source.status == Source.Status.READY
    assert source.page_count == 4
    pages = list(source.chunks.values_list("page", flat=True))
    assert pages == sorted(pages)
    assert set(pages) == {1, 2, 3, 4}


def test_an_embedding_server_error_fails_the_source_without_chunks(fake_openai, owner, notebook):
    fake_openai.fail_next("500", times=10, endpoint="embeddings")
    source = queued_source(owner, notebook)

    process_source(source_id=source.pk)

    source.refresh_from_db()
    assert source.status == Source.Status.FAILED
    assert "embedding model" in source.error
    assert fake_openai.base_url in source.error
    assert "HTTP 500" in source.error
    assert Chunk.objects.count() == 0
    assert len(fake_openai.embedding_requests) == 2  # the first try and one retry


def test_a_failure_after_some_batches_writes_no_chunk_at_all(
    fake_openai, owner, notebook, settings
):
    settings.EMBEDDING_BATCH_SIZE = 1
    fake_openai.fail_next("500", times=10, endpoint="embeddings", skip=2)
    source = queued_source(owner, notebook)

    process_source(source_id=source.pk)

    source.refresh_from_db()
    assert source.status == Source.Status.FAILED
    assert source.chunk_count == 0
    assert Chunk.objects.count() == 0
    assert [request.answered_with for request in fake_openai.embedding_requests][:3] == [
        "ok",
        "ok",
        "500",
    ]


def test_a_source_without_a_text_layer_fails_with_the_loaders_reason(fake_openai, owner, notebook):
    image_pdf = read(str(PDFS / "sample-files/cmyk-image.pdf"))
    source = queued_source(owner, notebook, image_pdf, "scan.pdf")

    process_source(source_id=source.pk)

    source.refresh_from_db()
    assert source.status == Source.Status.FAILED
    assert "No text could be read" in source.error
    assert "capture mode 'auto'" in source.error
    assert fake_openai.requests == []


def test_reprocessing_replaces_the_chunks(fake_openai, owner, notebook, settings):
    source = queued_source(owner, notebook)
    process_source(source_id=source.pk)
    old_ids = set(Chunk.objects.values_list("id", flat=True))

    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 200, 20
    Source.objects.filter(pk=source.pk).update(status=Source.Status.QUEUED)
    process_source(source_id=source.pk)

    source.refresh_from_db()
    chunks = list(source.chunks.all())
    assert source.status == Source.Status.READY
    assert source.chunk_count == len(chunks) == 6
    assert [chunk.ordinal for chunk in chunks] == list(range(6))
    assert old_ids.isdisjoint(chunk.pk for chunk in chunks)


def test_a_reprocessing_that_fails_while_embedding_leaves_no_chunk_half_embedded(
    fake_openai, owner, notebook
):
    source = queued_source(owner, notebook)
    process_source(source_id=source.pk)

    Source.objects.filter(pk=source.pk).update(status=Source.Status.QUEUED)
    # The first embedding request and its one retry (OPENAI_MAX_RETRIES=1) fail.
    fake_openai.fail_next("500", times=2, endpoint="embeddings")
    process_source(source_id=source.pk)

    source.refresh_from_db()
    assert source.status == Source.Status.FAILED
    assert source.chunk_count == 0
    assert not Chunk.objects.filter(source=source).exists()
    # Retried, it reads and embeds again.
    Source.objects.filter(pk=source.pk).update(status=Source.Status.QUEUED)
    source = process_source(source_id=source.pk)
    assert source.status == Source.Status.READY
    assert not Chunk.objects.filter(source=source, embedding__isnull=True).exists()


def test_a_ready_source_is_not_processed_again(fake_openai, owner, notebook):
    source = queued_source(owner, notebook, read(CRAZY_ONES), "crazy.pdf")
    process_source(source_id=source.pk)
    requests_before = len(fake_openai.requests)

    process_source(source_id=source.pk)

    assert len(fake_openai.requests) == requests_before
    assert Source.objects.get(pk=source.pk).status == Source.Status.READY
