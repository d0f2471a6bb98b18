from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from library.models import Source
from notebooks.models import Notebook, NotebookSource


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


def link_source(*, notebook: Notebook, source: Source) -> bool:
    """Put a source already in the owner's library into one more notebook (nothing is read
    or embedded again). False when it was there already."""
    if source.owner_id != notebook.owner_id:
        raise ValueError("A notebook can only hold its owner's sources.")
    return NotebookSource.objects.get_or_create(notebook=notebook, source=source)[1]


def unlink_source(*, notebook: Notebook, source: Source) -> None:
    """Take a source out of a notebook. It stays in the owner's library (and in other
    notebooks); this notebook's answers no longer search it, and its old citations show
    "source removed"."""
    NotebookSource.objects.filter(notebook=notebook, source=source).delete()
