from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from citations.models import CitedPassage
from library.models import Source
from notebooks.models import (
    Message,
    Note,
    Notebook,
    NotebookSource,
    NoteCitation,
)
from texts.errors import UserFacingError

NOTE_MAX_CHARS = 50_000


class NotebookTitleTaken(UserFacingError):
    pass


def create_notebook(*, owner: User, title: str) -> Notebook:
    title = title.strip()
    if not title:
        raise UserFacingError(_("A notebook needs a title."))
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


class SourceNotRemovable(UserFacingError):
    """A studio document's or a note's source: deleting the document or the note removes it."""


def unlink_source(*, notebook: Notebook, source: Source) -> None:
    """Take a source out of a notebook. It stays in the owner's library (and in other
    notebooks); this notebook's answers no longer search it, and its old citations show
    "source removed". A studio document's or a note's source is refused: it is removed with
    the document or the note, never left behind without it."""
    if source.kind in (Source.Kind.GENERATED, Source.Kind.NOTE):
        raise SourceNotRemovable(
            _("Delete the studio document or the note itself, not its source.")
        )
    NotebookSource.objects.filter(notebook=notebook, source=source).delete()


def delete_from_library(*, owner: User, source: Source) -> None:
    """Delete one of `owner`'s sources from their library, with its file: only one no
    notebook holds (anyone's: a public source may sit in others'), that is not public and
    not being read. Old citations of it show "source removed". UserFacingError otherwise."""
    with transaction.atomic():
        source = Source.objects.select_for_update().get(pk=source.pk, owner=owner)
        if NotebookSource.objects.filter(source=source).exists():
            raise UserFacingError(
                _("“%(title)s” is still in a notebook: remove it there first.")
                % {"title": source.title}
            )
        if source.public:
            raise UserFacingError(
                _("“%(title)s” is public: unpublish it first.") % {"title": source.title}
            )
        if not source.is_finished:
            raise UserFacingError(
                _("“%(title)s” is still being read: delete it once it is done.")
                % {"title": source.title}
            )
        file = source.file
        source.delete()
        if file:
            # After the commit: a rollback must not leave a row without its file.
            transaction.on_commit(lambda: file.delete(save=False))


# Notes --------------------------------------------------------------------------------


def note_text(content: str) -> str:
    """A note's text as stored: stripped, not empty, within NOTE_MAX_CHARS."""
    content = content.strip()
    if not content:
        raise UserFacingError(_("A note needs some text."))
    if len(content) > NOTE_MAX_CHARS:
        raise UserFacingError(
            _("A note may be at most %(max)s characters.") % {"max": f"{NOTE_MAX_CHARS:,}"}
        )
    return content


def create_note(*, user: User, notebook: Notebook, content: str, title: str = "") -> Note:
    content = note_text(content)
    return Note.objects.create(
        notebook=notebook, user=user, title=" ".join(title.split())[:200], content=content
    )


def save_answer_as_note(*, user: User, message: Message) -> Note:
    """A note of `user`'s holding the answer's text and copies of its citations, which keep
    opening their passages (and say "source removed" once a source is gone)."""
    if message.role != Message.Role.ASSISTANT or message.mode == Message.Mode.REFUSAL:
        raise UserFacingError(_("Only an answer with its sources can be saved as a note."))
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


def delete_note(*, note: Note) -> None:
    """Delete the note, and its source if it is one (answers citing it: "source removed")."""
    with transaction.atomic():
        if note.source_id is not None:
            Source.objects.filter(pk=note.source_id).delete()
        note.delete()


def make_note_a_note_again(*, note: Note) -> None:
    """Take the note out of the notebook's sources: its chunks go, the note stays, and
    answers that cited it show "source removed"."""
    with transaction.atomic():
        if note.source_id is not None:
            Source.objects.filter(pk=note.source_id).delete()
        note.source = None
        note.save(update_fields=["source", "updated_at"])
