from django.core.files.base import ContentFile

from billing.models import Usage
from ingest.services import add_source, process_source
from ingest.summaries import HEAD_WORDS
from ingest.tests.summaries import DOCUMENT
from library.models import Source

REPLY = "Otters are aquatic mammals; the text describes how they sleep, dig dens and groom."


def test_the_chat_model_summarises_the_head_of_a_source_in_its_language(
    fake_openai, settings, owner, notebook
):
    settings.SOURCE_SUMMARIES = "auto"
    fake_openai.chat_replies.append(REPLY)
    # Longer than the head: the tail must not reach the model.
    repeats = HEAD_WORDS // len(DOCUMENT.split()) + 2
    content = " ".join([DOCUMENT] * repeats) + " An unsent tail."
    source = add_source(
        owner=owner, notebook=notebook, upload=ContentFile(content.encode(), name="otters.txt")
    ).source

    process_source(source_id=source.pk)

    source.refresh_from_db()
    assert source.status == Source.Status.READY
    assert (source.summary, source.summary_mode) == (REPLY, "llm")
    # The summary's call, then the source guide's (notebooks/guides.py).
    request, _guide = fake_openai.chat_requests
    prompt = "\n".join(message["content"] for message in request.body["messages"])
    assert DOCUMENT in prompt
    assert "unsent" not in prompt
    assert "in the document's own language" in prompt
    assert "about 120 words" in prompt
    assert "(detected language: en)" in prompt
    assert Usage.objects.filter(kind="chat", source=source, user=owner).count() == 2
