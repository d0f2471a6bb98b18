from django.contrib.auth import get_user_model
from django.urls import reverse

from notebooks.tests.factories import make_source


def test_the_source_admin_shows_the_summary_in_the_list_and_the_form(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    source.summary, source.summary_mode = "Field notes about otters and herons.", "extractive"
    source.save()
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw-123456")
    client.force_login(admin)

    listing = client.get(reverse("admin:library_source_changelist"))
    form = client.get(reverse("admin:library_source_change", args=[source.pk]))

    assert "Field notes about otters and herons." in listing.text
    assert "Field notes about otters and herons." in form.text
    assert "Sentences from the document" in form.text
