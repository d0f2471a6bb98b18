import pytest
from django.core.files import File
from procrastinate.contrib.django import app
from procrastinate.contrib.django.models import ProcrastinateJob

from ingest.services import add_source
from ingest.tests.data import PDFS
from ingest.waiting import wait_for_sources
from library.models import Source
from ops.worker import drain_queue

FOUR_PAGES = str(PDFS / "sample-files/pdflatex-4-pages.pdf")
SCAN = str(PDFS / "sample-files/cmyk-image.pdf")


def add_file(owner, notebook, path: str) -> Source:
    with open(path, "rb") as handle:
        return add_source(owner=owner, notebook=notebook, upload=File(handle)).source


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_turns_an_uploaded_pdf_into_a_ready_source(fake_openai, owner, notebook):
    source = add_file(owner, notebook, FOUR_PAGES)

    with app.replace_connector(app.connector.get_worker_connector()) as worker_app:
        worker_app.run_worker(
            queues=["ingest"], wait=False, install_signal_handlers=False, listen_notify=False
        )

    source.refresh_from_db()
    assert source.status == Source.Status.READY, source.error
    assert source.page_count == 4
    assert source.chunk_count == source.chunks.count() > 0
    assert set(source.chunks.values_list("page", flat=True)) == {1, 2, 3, 4}
    assert set(source.chunks.values_list("embedding_model", flat=True)) == {"fake-embed"}
    assert fake_openai.embedding_requests
    job = ProcrastinateJob.objects.get(args={"source_id": source.pk})
    assert job.status == "succeeded"


@pytest.mark.django_db(transaction=True)
def test_waiting_for_sources_drains_the_queue_until_each_is_finished(fake_openai, owner, notebook):
    good = add_file(owner, notebook, FOUR_PAGES)
    bad = add_file(owner, notebook, SCAN)

    finished = {source.pk: source for source in wait_for_sources([good.pk, bad.pk])}

    assert finished[good.pk].status == Source.Status.READY
    assert finished[bad.pk].status == Source.Status.FAILED
    assert "No text could be read" in finished[bad.pk].error
    # (Upkeep jobs the worker's periodic deferrer queued wait on "maintenance".)
    assert not ProcrastinateJob.objects.filter(status="todo", queue_name="ingest").exists()


@pytest.mark.django_db(transaction=True)
def test_draining_an_empty_queue_returns_at_once(fake_openai):
    drain_queue()

    assert fake_openai.requests == []
