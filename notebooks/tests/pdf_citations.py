"""A PDF read by the real ingest pipeline and an answer citing a quote on one of its pages."""

from __future__ import annotations

from pathlib import Path

from library.models import Source
from notebooks.models import Citation, Conversation, Message, Notebook


def cite_pdf(*, notebook: Notebook, source: Source, quote: str, n: int = 1) -> Citation:
    """A citation of the chunk that holds `quote`, the way answering stores one."""
    chunk = next(chunk for chunk in source.chunks.all() if quote in chunk.text)
    conversation = Conversation.objects.create(notebook=notebook, user=notebook.owner)
    message = Message.objects.create(
        conversation=conversation,
        role=Message.Role.ASSISTANT,
        content=f"A claim [{n}].",
        mode=Message.Mode.LLM,
    )
    return Citation.objects.create(
        message=message,
        n=n,
        chunk=chunk,
        source=source,
        source_title=source.title,
        page=chunk.page,
        quote=quote,
        similarity=0.7,
    )


def add_pdf(add_ready_source, notebook: Notebook, path: Path) -> Source:
    return add_ready_source(notebook, path.read_bytes(), name=path.name)
