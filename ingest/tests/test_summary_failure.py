from django.core.files.base import ContentFile

from ingest.services import add_source, process_source
from ingest.tests.summaries import DOCUMENT
from library.models import Source


def test_a_failing_summary_call_leaves_the_source_ready_without_a_summary(
    fake_openai, settings, owner, notebook
):
    settings.SOURCE_SUMMARIES = "auto"
    fake_openai.fail_next("500", times=2, endpoint="chat/completions")  # and its one retry
    source = add_source(
        owner=owner, notebook=notebook, upload=ContentFile(DOCUMENT.encode(), name="otters.txt")
    ).source

    process_source(source_id=source.pk)

    source.refresh_from_db()
    assert source.status == Source.Status.READY
    assert source.error == ""
    assert source.chunk_count == 1
    assert (source.summary, source.summary_mode) == ("", "")
    assert source.summary_error.startswith("No summary")
