"""get_notebook, which every notebook page and a streamed answer run first: the notebook
for its owner and its members by role, a 404 for everyone else and for ids that name no
notebook, as readable_notebooks() and editable_notebooks() decide."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import Http404

from notebooks.models import Notebook
from sharing import access
from sharing.models import Membership, Role


@pytest.fixture
def people(owner, outsider):
    make = get_user_model().objects.create_user
    editor, viewer, elsewhere = make("editor"), make("viewer"), make("elsewhere")
    notebook = Notebook.objects.create(owner=owner, title="Shared")
    Membership.objects.create(notebook=notebook, user=editor, role=Role.EDITOR)
    Membership.objects.create(notebook=notebook, user=viewer, role=Role.VIEWER)
    # A member of another of the owner's notebooks only.
    other = Notebook.objects.create(owner=owner, title="Other")
    Membership.objects.create(notebook=other, user=elsewhere, role=Role.EDITOR)
    return notebook, {"owner": owner, "editor": editor, "viewer": viewer}, [outsider, elsewhere]


def test_each_reader_gets_the_notebook_with_their_role_as_the_querysets_say(people):
    notebook, readers, others = people
    for name, user in readers.items():
        found = access.get_notebook(user, notebook.pk)
        assert found == notebook and found.role == name
        assert notebook in access.readable_notebooks(user)
        assert found.owner.get_username() == "owner"
    for user in [*others, AnonymousUser()]:
        assert notebook not in access.readable_notebooks(user)
        with pytest.raises(Http404):
            access.get_notebook(user, notebook.pk)


def test_a_role_too_small_is_refused_and_an_editor_may_edit(people):
    notebook, readers, _others = people
    assert access.get_notebook(readers["editor"], notebook.pk, Role.EDITOR).role == "editor"
    with pytest.raises(PermissionDenied):
        access.get_notebook(readers["viewer"], notebook.pk, Role.EDITOR)
    with pytest.raises(PermissionDenied):
        access.get_notebook(readers["editor"], notebook.pk, Role.OWNER)
    assert access.get_notebook(readers["owner"], notebook.pk, Role.OWNER).role == "owner"


def test_ids_that_name_no_notebook_are_not_found(people):
    _notebook, readers, _others = people
    for notebook_id in ["9" * 30, str(2**63), "12a", "-1", "", "999999"]:
        with pytest.raises(Http404):
            access.get_notebook(readers["owner"], notebook_id)


def test_the_owner_is_not_read_again_for_the_owner(people, django_assert_num_queries):
    notebook, readers, _others = people
    with django_assert_num_queries(1):
        found = access.get_notebook(readers["owner"], notebook.pk)
        assert found.owner.get_username() == "owner"
