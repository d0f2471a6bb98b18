"""The analytics pages: a notebook's for its owner and editors (a viewer 403, an outsider
404), the site's for staff only; figures, SVG charts drawn on the server (no script, no
inline style), in German too."""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.urls import reverse

from analytics.models import QuestionLog
from sharing.models import Membership


def _log(notebook, question, *, refused=False, total=1500):
    return QuestionLog.objects.create(
        notebook=notebook,
        user=notebook.owner,
        question=question,
        mode="refusal" if refused else "llm",
        refused=refused,
        retrieval_ms=120,
        first_word_ms=800,
        total_ms=total,
        citations=2,
        supported_citations=1,
    )


def test_the_owner_reads_the_figures_and_the_charts(client, owner, notebook):
    _log(notebook, "Where do herons wait?")
    _log(notebook, "How do otters sleep?", refused=True, total=300)
    client.force_login(owner)

    response = client.get(reverse("analytics:notebook", args=[notebook.pk]))

    html = response.content.decode()
    assert response.status_code == 200
    assert "<dd>2</dd>" in html  # questions
    assert "1 (50.0 %)" in html  # refused, and its rate
    assert "2 / 4 (50.0 %)" in html  # unsupported citations
    assert "How do otters sleep?" in html  # not answered: what to add next
    assert html.count("<svg") == 2 and 'class="chart-part"' in html
    assert "style=" not in html.split("<main", 1)[1] and "<script" not in html.split("<main", 1)[1]


def test_numbers_in_the_charts_stay_unlocalized_in_german(client, owner, notebook):
    _log(notebook, "Wo warten Reiher?", total=1600)
    client.force_login(owner)

    html = client.get(
        reverse("analytics:notebook", args=[notebook.pk]), HTTP_ACCEPT_LANGUAGE="de"
    ).content.decode()

    assert "Gestellte Fragen" in html
    for value in re.findall(r' (?:x|y|width|height)="([^"]*)"', html):
        assert "," not in value, value
    assert "1,6 s" in html  # the table, in the reader's format


def test_editors_see_it_viewers_do_not_outsiders_get_404(client, owner, outsider, notebook):
    people = get_user_model().objects
    editor = people.create_user(username="editor", password="pw-12345")
    viewer = people.create_user(username="viewer", password="pw-12345")
    Membership.objects.create(notebook=notebook, user=editor, role="editor")
    Membership.objects.create(notebook=notebook, user=viewer, role="viewer")
    _log(notebook, "A secret question about zebracorns")
    url = reverse("analytics:notebook", args=[notebook.pk])

    for person, status in ((editor, 200), (viewer, 403), (outsider, 404)):
        client.force_login(person)
        response = client.get(url)
        assert response.status_code == status, person
        if status != 200:
            assert b"zebracorns" not in response.content


def test_the_site_page_is_for_staff_only(client, owner, notebook):
    _log(notebook, "Where do herons wait?")
    client.force_login(owner)
    assert client.get(reverse("analytics:site")).status_code == 404

    owner.is_staff = True
    owner.save()
    html = client.get(reverse("analytics:site") + "?days=7").content.decode()
    assert "Questions asked on this site" in html and "<dd>1</dd>" in html
