"""Adding a web page: checked for its form at once, fetched later by the worker."""

import pytest
from procrastinate.contrib.django.models import ProcrastinateJob

from ingest.services import UploadRejected, add_url
from library.models import Source
from notebooks.models import Notebook


def ingest_jobs(source: Source) -> list[ProcrastinateJob]:
    return list(
        ProcrastinateJob.objects.filter(
            task_name="ingest.tasks.ingest_source", args={"source_id": source.pk}
        )
    )


def test_a_new_url_is_queued_and_linked_without_fetching(owner, notebook, media_root):
    added = add_url(owner=owner, notebook=notebook, url="https://pages.example/herons")

    source = added.source
    assert added.created
    assert source.kind == Source.Kind.URL
    assert source.url == source.title == "https://pages.example/herons"
    assert source.status == Source.Status.QUEUED
    assert not source.file
    assert list(notebook.sources.all()) == [source]
    assert len(ingest_jobs(source)) == 1
    assert not media_root.exists() or not any(media_root.rglob("*.*"))


def test_the_same_url_again_links_the_existing_source(owner, notebook):
    first = add_url(owner=owner, notebook=notebook, url="https://pages.example/herons").source
    second_notebook = Notebook.objects.create(owner=owner, title="Second")

    again = add_url(
        owner=owner, notebook=second_notebook, url="  HTTPS://Pages.Example:443/herons#nests "
    )

    assert not again.created
    assert again.source.pk == first.pk
    assert Source.objects.count() == 1
    assert list(second_notebook.sources.all()) == [first]
    assert len(ingest_jobs(first)) == 1  # nothing is fetched or embedded twice


def test_a_different_url_is_a_different_source(owner, notebook):
    first = add_url(owner=owner, notebook=notebook, url="https://pages.example/herons").source

    other = add_url(owner=owner, notebook=notebook, url="https://pages.example/herons?page=2")

    assert other.created
    assert other.source.pk != first.pk


def test_another_owner_adding_the_same_url_gets_their_own_source(owner, outsider, notebook):
    mine = add_url(owner=owner, notebook=notebook, url="https://pages.example/herons").source
    theirs_notebook = Notebook.objects.create(owner=outsider, title="Theirs")

    theirs = add_url(owner=outsider, notebook=theirs_notebook, url="https://pages.example/herons")

    assert theirs.created
    assert theirs.source.pk != mine.pk
    assert theirs.source.owner == outsider


def test_a_failed_url_added_again_is_queued_again(owner, notebook):
    source = add_url(owner=owner, notebook=notebook, url="https://pages.example/").source
    Source.objects.filter(pk=source.pk).update(status=Source.Status.FAILED, error="timed out")

    again = add_url(owner=owner, notebook=notebook, url="https://pages.example/")

    again.source.refresh_from_db()
    assert (again.source.status, again.source.error) == (Source.Status.QUEUED, "")
    assert len(ingest_jobs(source)) == 2


def test_a_url_without_a_scheme_is_taken_as_https(owner, notebook):
    source = add_url(owner=owner, notebook=notebook, url="pages.example/herons").source

    assert source.url == "https://pages.example/herons"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://pages.example/file.txt", "only http:// and https://"),
        ("file:///etc/passwd", "only http:// and https://"),
        ("https://user:secret@pages.example/", "user name or password"),
        ("", "Enter the address of a web page"),
        ("https://pages.example:99999/", "not a valid web address"),
    ],
)
def test_a_url_of_the_wrong_form_is_rejected_at_once(owner, notebook, url, reason):
    with pytest.raises(UploadRejected, match=reason):
        add_url(owner=owner, notebook=notebook, url=url)

    assert not Source.objects.exists()
    assert not ProcrastinateJob.objects.exists()


def test_the_pdf_capture_mode_is_kept_for_a_url_that_may_be_a_pdf(owner, notebook):
    source = add_url(
        owner=owner, notebook=notebook, url="https://pages.example/scan.pdf", pdf_capture="text"
    ).source

    assert source.pdf_capture == "text"
