"""Fixtures shared by every app's tests: an owner, an outsider who must see nothing of
the owner's, and a notebook."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from notebooks.models import Notebook


@pytest.fixture
def owner(db):
    return get_user_model().objects.create_user(username="owner", password="owner-pass-123")


@pytest.fixture
def outsider(db):
    return get_user_model().objects.create_user(username="outsider", password="outsider-pass-123")


@pytest.fixture
def notebook(owner):
    return Notebook.objects.create(owner=owner, title="Research")
