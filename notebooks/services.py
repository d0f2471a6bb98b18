from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
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
