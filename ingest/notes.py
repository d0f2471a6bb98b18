"""A note made a source of its notebook: written as Markdown and read by the normal ingest
pipeline, and read again when its text changes."""

from __future__ import annotations

from django.db import transaction

from ingest.services.adding import add_markdown_source
from ingest.tasks import ingest_source
from library.models import Source
from notebooks.markers import strip_markers
from notebooks.models import Note
from notebooks.services import note_text


def edit_note(*, note: Note, content: str, title: str) -> Note:
    """Change a note's text; as a source it is read again with the new text."""
    content = note_text(content)
    changed = content != note.content
    note.content = content
    note.title = " ".join(title.split())[:200]
    note.save(update_fields=["content", "title", "updated_at"])
    if changed and note.source_id is not None:
        make_note_a_source(note=note)
    return note


def make_note_a_source(*, note: Note) -> Source:
    """Make the note a source of its notebook (kind "note"), queued to be chunked and
    embedded like an upload; a note that is one already gets its source made again from
    its text as it is now. Everyone who reads the notebook then reads and searches it."""
    # The note's [n] point at its own citations, which a passage quoted from it cannot carry.
    text = strip_markers(note.content)
    if note.title:
        text = f"# {note.title}\n\n{text}"
    with transaction.atomic():
        if note.source_id is not None:
            Source.objects.filter(pk=note.source_id).delete()
        source = add_markdown_source(
            owner_id=note.user_id,
            notebook_id=note.notebook_id,
            kind=Source.Kind.NOTE,
            title=note.display_title,
            # The note and its text: a note made a source again gets a new one.
            key=f"note:{note.pk}:{text}",
            filename=f"note-{note.pk}.md",
            text=text,
        )
        note.source = source
        note.save(update_fields=["source", "updated_at"])
        ingest_source.defer(source_id=source.pk)
    return source
