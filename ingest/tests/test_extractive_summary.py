from django.core.files.base import ContentFile

from ingest.services import add_source, process_source
from ingest.tests.summaries import DOCUMENT
from language.words import split_sentences
from library.models import Source


def test_without_a_chat_model_the_summary_is_sentences_of_the_document(
    fake_openai, settings, owner, notebook
):
    settings.SOURCE_SUMMARIES = "auto"
    settings.CHAT_MODEL = ""
    source = add_source(
        owner=owner, notebook=notebook, upload=ContentFile(DOCUMENT.encode(), name="otters.txt")
    ).source

    process_source(source_id=source.pk)

    source.refresh_from_db()
    assert source.status == Source.Status.READY
    assert source.summary_mode == "extractive"
    sentences = split_sentences(source.summary)
    assert 1 <= len(sentences) <= 5
    assert all(sentence in DOCUMENT for sentence in sentences)
    assert "Sea otters hold hands" in source.summary  # the central ones, not the asides
    assert "postcards" not in source.summary
    assert not fake_openai.chat_requests
