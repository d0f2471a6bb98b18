import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse


@pytest.mark.parametrize(
    "name",
    [
        "admin:library_source_changelist",
        "admin:library_chunk_changelist",
        "admin:library_preferences_changelist",
        "admin:notebooks_notebook_changelist",
        "admin:notebooks_conversation_changelist",
        "admin:notebooks_citation_changelist",
        "admin:billing_usage_changelist",
    ],
)
def test_admin_lists_open_for_a_superuser(client, db, name):
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw-123456")
    client.force_login(admin)
    assert client.get(reverse(name)).status_code == 200
