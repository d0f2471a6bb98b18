import pytest
from django.core.files.base import ContentFile
from procrastinate.contrib.django.models import ProcrastinateJob

from ingest.services import UploadRejected, add_source
from ingest.tests.data import PDFS
from library.models import Source
from notebooks.models import Notebook

NOTES = b"Loupe notes.\nThe heron waits at the edge of the pond.\n"


def upload(content: bytes = NOTES, name: str = "notes.txt") -> ContentFile:
    return ContentFile(content, name=name)


def stored_files(media_root) -> list:
    return [path for path in media_root.rglob("*") if path.is_file()]


def ingest_jobs(source: Source) -> list[ProcrastinateJob]:
    return list(
        ProcrastinateJob.objects.filter(
            task_name="ingest.tasks.ingest_source", args={"source_id": source.pk}
        )
    )


def test_a_new_upload_is_stored_queued_and_linked(owner, notebook, media_root):
    added = add_source(owner=owner, notebook=notebook, upload=upload())

    source = added.source
    assert added.created
    assert (source.kind, source.title, source.filename) == ("text", "notes", "notes.txt")
    assert source.status == Source.Status.QUEUED
    assert source.size_bytes == len(NOTES)
    assert list(notebook.sources.all()) == [source]
    assert [path.read_bytes() for path in stored_files(media_root)] == [NOTES]


def test_a_new_source_defers_exactly_one_ingest_job(owner, notebook):
    source = add_source(owner=owner, notebook=notebook, upload=upload()).source

    jobs = ingest_jobs(source)
    assert len(jobs) == 1
    assert (jobs[0].queue_name, jobs[0].status) == ("ingest", "todo")


def test_duplicate_upload_links_existing_source(owner, notebook, media_root):
    first = add_source(owner=owner, notebook=notebook, upload=upload()).source

    again = add_source(owner=owner, notebook=notebook, upload=upload(name="copy.txt"))

    assert not again.created
    assert again.source.pk == first.pk
    assert Source.objects.count() == 1
    assert len(stored_files(media_root)) == 1
    assert notebook.sources.count() == 1
    assert len(ingest_jobs(first)) == 1  # nothing is embedded twice


def test_the_same_bytes_in_a_second_notebook_link_the_same_source(owner, notebook, media_root):
    first = add_source(owner=owner, notebook=notebook, upload=upload()).source
    second_notebook = Notebook.objects.create(owner=owner, title="Second")

    again = add_source(owner=owner, notebook=second_notebook, upload=upload())

    assert not again.created
    assert again.source.pk == first.pk
    assert list(second_notebook.sources.all()) == [first]
    assert list(notebook.sources.all()) == [first]
    assert len(stored_files(media_root)) == 1
    assert len(ingest_jobs(first)) == 1


def test_a_different_owner_gets_their_own_source(owner, outsider, notebook, media_root):
    mine = add_source(owner=owner, notebook=notebook, upload=upload()).source
    their_notebook = Notebook.objects.create(owner=outsider, title="Research")

    theirs = add_source(owner=outsider, notebook=their_notebook, upload=upload())

    assert theirs.created
    assert theirs.source.pk != mine.pk
    assert theirs.source.owner == outsider
    assert list(their_notebook.sources.all()) == [theirs.source]
    assert len(stored_files(media_root)) == 2
    assert len(ingest_jobs(theirs.source)) == 1


def test_a_failed_source_uploaded_again_is_queued_again(owner, notebook):
    source = add_source(owner=owner, notebook=notebook, upload=upload()).source
    Source.objects.filter(pk=source.pk).update(status=Source.Status.FAILED, error="server down")

    again = add_source(owner=owner, notebook=notebook, upload=upload())

    again.source.refresh_from_db()
    assert not again.created
    assert (again.source.status, again.source.error) == (Source.Status.QUEUED, "")
    assert len(ingest_jobs(source)) == 2


def test_an_empty_upload_is_rejected(owner, notebook, media_root):
    with pytest.raises(UploadRejected, match="empty"):
        add_source(owner=owner, notebook=notebook, upload=upload(b"", name="empty.txt"))

    assert Source.objects.count() == 0
    assert ProcrastinateJob.objects.count() == 0
    assert stored_files(media_root) == []


def test_an_upload_of_an_unknown_kind_is_rejected(owner, notebook):
    blob = b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(range(256))

    with pytest.raises(UploadRejected, match="archive.zip"):
        add_source(owner=owner, notebook=notebook, upload=upload(blob, name="archive.zip"))

    assert Source.objects.count() == 0


def test_an_upload_over_the_size_cap_is_rejected(owner, notebook, settings):
    settings.UPLOAD_MAX_BYTES = 10

    with pytest.raises(UploadRejected, match="UPLOAD_MAX_BYTES"):
        add_source(owner=owner, notebook=notebook, upload=upload())

    assert Source.objects.count() == 0


def test_a_pdf_upload_is_recognised_by_its_bytes(owner, notebook):
    with open(str(PDFS / "pypdf/crazyones.pdf"), "rb") as handle:
        content = handle.read()

    source = add_source(owner=owner, notebook=notebook, upload=upload(content, "x.bin")).source

    assert source.kind == "pdf"
