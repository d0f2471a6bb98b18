from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from notebooks.models import Notebook


class NotebookTitleTaken(Exception):
    pass


def create_notebook(*, owner: User, title: str) -> Notebook:
    title = title.strip()
    if not title:
        raise ValueError("A notebook needs a title.")
    try:
        with transaction.atomic():
            return Notebook.objects.create(owner=owner, title=title[:200])
    except IntegrityError as exc:
        raise NotebookTitleTaken(f"You already have a notebook called {title!r}.") from exc


def get_or_create_notebook(*, owner: User, title: str) -> tuple[Notebook, bool]:
    notebook = Notebook.objects.filter(owner=owner, title=title).first()
    if notebook:
        return notebook, False
    try:
        return create_notebook(owner=owner, title=title), True
    except NotebookTitleTaken:
        return Notebook.objects.get(owner=owner, title=title), False
