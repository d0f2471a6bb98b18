from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils.translation import gettext as _

from library.models import Source
from notebooks.models import (
    CitedPassage,
    Message,
    Note,
    Notebook,
    NotebookSource,
    NoteCitation,
    UntickedSource,
)

NOTE_MAX_CHARS = 50_000


class NotebookTitleTaken(Exception):
    pass


def create_notebook(*, owner: User, title: str) -> Notebook:
    title = title.strip()
    if not title:
        raise ValueError(_("A notebook needs a title."))
    try:
        with transaction.atomic():
            return Notebook.objects.create(owner=owner, title=title[:200])
    except IntegrityError as exc:
        raise NotebookTitleTaken(
            _("You already have a notebook called “%(title)s”.") % {"title": title}
        ) from exc


def get_or_create_notebook(*, owner: User, title: str) -> tuple[Notebook, bool]:
    notebook = Notebook.objects.filter(owner=owner, title=title).first()
    if notebook:
        return notebook, False
    try:
        return create_notebook(owner=owner, title=title), True
    except NotebookTitleTaken:
        return Notebook.objects.get(owner=owner, title=title), False


def link_source(*, notebook: Notebook, source: Source, user: User) -> bool:
    """Put a source `user` may link (their own, or a public one) into a notebook they may
    edit; nothing is read or embedded again. False when it was there already."""
    from sharing import access

    if not access.editable_notebooks(user).filter(pk=notebook.pk).exists():
        raise PermissionDenied(_("You cannot add sources to this notebook."))
    if not access.linkable_sources(user).filter(pk=source.pk).exists():
        raise PermissionDenied(_("You can add only your own sources and public ones."))
    with transaction.atomic():
        link, created = NotebookSource.objects.select_for_update().get_or_create(
            notebook=notebook, source=source, defaults={"added_by": user}
        )
        if not created and link.added_by_id != source.owner_id and user.pk == source.owner_id:
            # The owner's own link outlives a publication that someone else's did not.
            link.added_by = user
            link.save(update_fields=["added_by"])
            return True
    return created


def unlink_source(*, notebook: Notebook, source: Source) -> None:
    """Take a source out of a notebook. It stays in the owner's library (and in other
    notebooks); this notebook's answers no longer search it, and its old citations show
    "source removed"."""
    NotebookSource.objects.filter(notebook=notebook, source=source).delete()


# Choosing the sources ------------------------------------------------------------------


@dataclass(frozen=True)
class SourceChoice:
    """Which of a notebook's listed sources (uploads, web pages, notes made sources; not
    generated documents, which live in the studio) one person has ticked there."""

    listed: list[Source]
    unticked: frozenset[int]

    @property
    def ticked(self) -> list[Source]:
        return [source for source in self.listed if source.pk not in self.unticked]

    @property
    def everything(self) -> bool:
        return not self.unticked & {source.pk for source in self.listed}

    @property
    def searched(self) -> list[int] | None:
        """The ids a question or document is limited to; None: all (nothing unticked).

        With any source unticked, generated documents are left out too: they restate the
        sources they were made from, the unticked ones among them."""
        return None if self.everything else [source.pk for source in self.ticked]


def listed_sources(notebook: Notebook) -> QuerySet[Source]:
    """The sources the notebook's list shows (and ticks): not its generated documents."""
    from sharing import access

    return access.notebook_sources(notebook).exclude(kind=Source.Kind.GENERATED)


def source_choice(*, user: User, notebook: Notebook) -> SourceChoice:
    unticked = UntickedSource.objects.filter(user=user, notebook=notebook)
    return SourceChoice(
        listed=list(listed_sources(notebook).order_by("-created_at", "-id")),
        unticked=frozenset(unticked.values_list("source_id", flat=True)),
    )


def searched_sources(*, user: User, notebook: Notebook) -> list[int] | None:
    """What `source_choice(...).searched` says, in one statement: a question's way to its
    first token counts them (notebooks/tests/test_ask_stream_queries.py)."""
    unticked = UntickedSource.objects.filter(user=user, notebook=notebook, source=OuterRef("pk"))
    rows = list(
        listed_sources(notebook).annotate(unticked=Exists(unticked)).values_list("pk", "unticked")
    )
    if not any(is_unticked for _pk, is_unticked in rows):
        return None
    return sorted(pk for pk, is_unticked in rows if not is_unticked)


def choose_sources(*, user: User, notebook: Notebook, ticked: Iterable[int]) -> SourceChoice:
    """Remember which of the notebook's sources `user` uses there: `ticked`, every other
    listed one unticked. ValueError naming ids that are not the notebook's."""
    ticked = set(ticked)
    listed = set(listed_sources(notebook).values_list("pk", flat=True))
    if unknown := ticked - listed:
        raise ValueError(
            _("This notebook has no source %(ids)s.")
            % {"ids": ", ".join(str(pk) for pk in sorted(unknown))}
        )
    with transaction.atomic():
        UntickedSource.objects.filter(user=user, notebook=notebook).delete()
        UntickedSource.objects.bulk_create(
            UntickedSource(user=user, notebook=notebook, source_id=pk)
            for pk in sorted(listed - ticked)
        )
    return source_choice(user=user, notebook=notebook)


def parse_source_ids(text: str, *, notebook: Notebook) -> list[int]:
    """`--sources ID,ID` of a command: the ids, each one of the notebook's sources (a
    generated document's too: named, it is searched like the others); ValueError otherwise."""
    from sharing import access

    pieces = [piece.strip() for piece in text.split(",") if piece.strip()]
    if not pieces or not all(piece.isdigit() for piece in pieces):
        raise ValueError(f"--sources takes source ids separated by commas, not {text!r}.")
    ids = sorted({int(piece) for piece in pieces})
    known = set(access.notebook_sources(notebook).filter(pk__in=ids).values_list("pk", flat=True))
    if missing := [pk for pk in ids if pk not in known]:
        raise ValueError(
            f"The notebook has no source {', '.join(map(str, missing))}; "
            "`manage.py notes` and the notebook page list its sources' ids."
        )
    return ids


# Notes --------------------------------------------------------------------------------


def create_note(*, user: User, notebook: Notebook, content: str, title: str = "") -> Note:
    content = content.strip()
    if not content:
        raise ValueError(_("A note needs some text."))
    if len(content) > NOTE_MAX_CHARS:
        raise ValueError(
            _("A note may be at most %(max)s characters.") % {"max": f"{NOTE_MAX_CHARS:,}"}
        )
    return Note.objects.create(
        notebook=notebook, user=user, title=" ".join(title.split())[:200], content=content
    )


def save_answer_as_note(*, user: User, message: Message) -> Note:
    """A note of `user`'s holding the answer's text and copies of its citations, which keep
    opening their passages (and say "source removed" once a source is gone)."""
    if message.role != Message.Role.ASSISTANT or message.mode == Message.Mode.REFUSAL:
        raise ValueError(_("Only an answer with its sources can be saved as a note."))
    question = (
        message.conversation.messages.filter(
            role=Message.Role.USER, created_at__lte=message.created_at
        )
        .order_by("-created_at", "-id")
        .values_list("content", flat=True)
        .first()
    )
    title = " ".join((question or "").split())
    with transaction.atomic():
        note = Note.objects.create(
            notebook_id=message.conversation.notebook_id,
            user=user,
            title=title if len(title) <= 200 else title[:199] + "…",
            content=message.content,
            from_message=message,
        )
        NoteCitation.objects.bulk_create(
            NoteCitation(
                note=note,
                **{
                    field.attname: getattr(cited, field.attname)
                    for field in CitedPassage._meta.concrete_fields
                    if field.attname != "id"
                },
            )
            for cited in message.citations.all()
        )
    return note


def edit_note(*, note: Note, content: str, title: str) -> Note:
    """Change a note's text; as a source it is read again with the new text."""
    content = content.strip()
    if not content:
        raise ValueError(_("A note needs some text."))
    if len(content) > NOTE_MAX_CHARS:
        raise ValueError(
            _("A note may be at most %(max)s characters.") % {"max": f"{NOTE_MAX_CHARS:,}"}
        )
    changed = content != note.content
    note.content = content
    note.title = " ".join(title.split())[:200]
    note.save(update_fields=["content", "title", "updated_at"])
    if changed and note.source_id is not None:
        make_note_a_source(note=note)
    return note


def delete_note(*, note: Note) -> None:
    """Delete the note, and its source if it is one (answers citing it: "source removed")."""
    with transaction.atomic():
        if note.source_id is not None:
            Source.objects.filter(pk=note.source_id).delete()
        note.delete()


def make_note_a_source(*, note: Note) -> Source:
    """Make the note a source of its notebook (kind "note"), queued to be chunked and
    embedded like an upload; a note that is one already gets its source made again from
    its text as it is now. Everyone who reads the notebook then reads and searches it."""
    from generation.documents.markers import strip_markers
    from ingest.tasks import ingest_source

    # The note's [n] point at its own citations, which a passage quoted from it cannot carry.
    text = strip_markers(note.content)
    if note.title:
        text = f"# {note.title}\n\n{text}"
    # Keyed by the note (and its text), not the text alone: two notes may say the same, and
    # each is its own source.
    sha256 = hashlib.sha256(f"note:{note.pk}:{text}".encode()).hexdigest()
    filename = f"note-{note.pk}.md"
    with transaction.atomic():
        if note.source_id is not None:
            Source.objects.filter(pk=note.source_id).delete()
        source = Source(
            owner_id=note.user_id,
            kind=Source.Kind.NOTE,
            title=note.display_title[:500],
            filename=filename,
            sha256=sha256,
            size_bytes=len(text.encode()),
            status=Source.Status.QUEUED,
        )
        source.file.save(filename, ContentFile(text.encode()), save=False)
        source.save()
        NotebookSource.objects.create(
            notebook_id=note.notebook_id, source=source, added_by_id=note.user_id
        )
        note.source = source
        note.save(update_fields=["source", "updated_at"])
        ingest_source.defer(source_id=source.pk)
    return source


def make_note_a_note_again(*, note: Note) -> None:
    """Take the note out of the notebook's sources: its chunks go, the note stays, and
    answers that cited it show "source removed"."""
    with transaction.atomic():
        if note.source_id is not None:
            Source.objects.filter(pk=note.source_id).delete()
        note.source = None
        note.save(update_fields=["source", "updated_at"])
