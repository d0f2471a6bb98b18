"""Rows for tests that need a cited answer, made directly so no model runs."""

from __future__ import annotations

from django.contrib.auth.models import User

from library.models import Chunk, Source
from notebooks.models import Citation, Conversation, Message, Notebook, NotebookSource


def make_source(*, owner: User, notebook: Notebook, title: str = "Field notes") -> Source:
    source = Source.objects.create(
        owner=owner,
        kind=Source.Kind.TEXT,
        title=title,
        filename=f"{title}.txt",
        sha256=title.encode().hex().ljust(64, "0")[:64],
        status=Source.Status.READY,
        chunk_count=1,
    )
    NotebookSource.objects.create(notebook=notebook, source=source)
    return source


def make_cited_answer(
    *, notebook: Notebook, source: Source, content: str = "Otters hold hands [1]."
) -> Citation:
    chunk = Chunk.objects.create(
        source=source,
        ordinal=0,
        page=4,
        text="Sea otters hold hands while they sleep.",
        char_start=0,
        char_end=39,
        embedding=[0.1] * 3,
        embedding_model="m",
    )
    conversation = Conversation.objects.create(notebook=notebook, user=notebook.owner)
    Message.objects.create(conversation=conversation, role=Message.Role.USER, content="Why?")
    message = Message.objects.create(
        conversation=conversation,
        role=Message.Role.ASSISTANT,
        content=content,
        mode=Message.Mode.LLM,
    )
    return Citation.objects.create(
        message=message,
        n=1,
        chunk=chunk,
        source=source,
        source_title=source.title,
        page=chunk.page,
        quote=chunk.text,
        similarity=0.812345,
    )
