"""Revising a slide is a job, as making a document is: the web request (and the API's)
only queues it, the slide says "revising…" and polls until the worker has rewritten it,
and a reply the model botches shows its reason on the slide, which stays as it was."""

import time

from django.urls import reverse

from api.tokens import create_token
from generation.documents.models import SlideRevision
from generation.documents.services import revise_slide
from generation.tests.studio.conftest import DECK, deck_slide, reply

HTMX = {"HX-Request": "true"}

REVISED = deck_slide(
    "Comfort, briefly",
    "Sleeper cabins include breakfast [4].",
    "Couchettes are cheaper [4].",
    "Couchettes have four or six berths [4].",
)


def a_deck(fake_openai, make_document):
    fake_openai.chat_replies.append(reply(DECK))
    return make_document("slides")


def test_the_request_only_queues_the_revision_and_the_slide_says_revising(
    client, fake_openai, owner, notebook, studio_sources, make_document
):
    document = a_deck(fake_openai, make_document)
    asked_before = len(fake_openai.chat_requests)
    # A model that takes its time: the page must not wait for it.
    fake_openai.slow_seconds = 2.0
    fake_openai.fail_next("slow", endpoint="completions")
    fake_openai.chat_replies.append(reply(REVISED))
    client.force_login(owner)

    started = time.monotonic()
    response = client.post(
        reverse("studio:revise", args=[notebook.pk, document.pk, 6]),
        {"instruction": "shorter"},
        headers=HTMX,
    )
    answered_in = time.monotonic() - started

    assert response.status_code == 200
    assert len(fake_openai.chat_requests) == asked_before  # no model call in the request
    assert answered_in < fake_openai.slow_seconds
    revision = SlideRevision.objects.get(document=document)
    assert revision.status == SlideRevision.Status.QUEUED
    status_url = reverse("studio:revision", args=[notebook.pk, document.pk, revision.pk])
    assert "revising… (“shorter”)" in response.text
    assert f'hx-get="{status_url}"' in response.text and "every 2s" in response.text
    page = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).text
    assert page.count("revising… (“shorter”)") == 1
    assert page.count('class="slide-revise"') == 5  # the other slides' forms, not this one's
    still = client.get(status_url, headers=HTMX)
    assert "revising…" in still.text and "HX-Redirect" not in still

    revise_slide(revision_id=revision.pk)  # the worker, answered after the model's wait

    revision.refresh_from_db()
    assert revision.status == SlideRevision.Status.READY, revision.error
    done = client.get(status_url, headers=HTMX)
    assert done["HX-Redirect"].endswith(f"/studio/{document.pk}/#slide-6")
    page = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).text
    assert "Comfort, briefly" in page and "revising…" not in page
    assert page.count('class="slide-revise"') == 6


def test_a_malformed_reply_fails_the_revision_and_the_slide_says_why(
    client, fake_openai, owner, notebook, studio_sources, make_document
):
    document = a_deck(fake_openai, make_document)
    before = document.data["slides"][1]
    # Not JSON, then JSON of the wrong shape: repaired once, then given up.
    fake_openai.chat_replies += ['{"heading": "Herons", "bullets": [', reply({"heading": 3})]
    client.force_login(owner)
    client.post(
        reverse("studio:revise", args=[notebook.pk, document.pk, 2]),
        {"instruction": "add the figures"},
        headers=HTMX,
    )
    revision = SlideRevision.objects.get(document=document)

    revise_slide(revision_id=revision.pk)

    revision.refresh_from_db()
    assert revision.status == SlideRevision.Status.FAILED
    assert "did not return a valid slide twice" in revision.error
    document.refresh_from_db()
    assert document.data["slides"][1] == before
    status_url = reverse("studio:revision", args=[notebook.pk, document.pk, revision.pk])
    shown = client.get(status_url, headers=HTMX).text
    assert "The revision “add the figures” failed:" in shown
    assert "did not return a valid slide twice" in shown
    assert 'class="slide-revise"' in shown  # asked again from the slide itself
    page = client.get(reverse("studio:document", args=[notebook.pk, document.pk])).text
    assert page.count("The revision “add the figures” failed:") == 1


def test_a_second_revision_waits_for_the_first(
    client, fake_openai, owner, notebook, studio_sources, make_document
):
    document = a_deck(fake_openai, make_document)
    client.force_login(owner)
    for number in (3, 4):
        response = client.post(
            reverse("studio:revise", args=[notebook.pk, document.pk, number]),
            {"instruction": "shorter"},
            headers=HTMX,
        )

    assert "Slide 3 of this deck is being revised" in response.text
    assert SlideRevision.objects.filter(document=document).count() == 1


def test_the_api_queues_a_revision_and_reports_its_status(
    client, fake_openai, owner, outsider, notebook, studio_sources, make_document
):
    document = a_deck(fake_openai, make_document)
    fake_openai.chat_replies.append(reply(REVISED))
    token = create_token(user=owner, name="script", scope="write").secret
    auth = {"Authorization": f"Bearer {token}"}
    base = f"/api/v1/notebooks/{notebook.pk}/documents/{document.pk}"

    queued = client.post(
        f"{base}/slides/6/revisions",
        {"instruction": "shorter"},
        content_type="application/json",
        headers=auth,
    )

    assert queued.status_code == 202
    body = queued.json()
    assert (body["number"], body["status"], body["instruction"]) == (6, "queued", "shorter")
    revise_slide(revision_id=body["id"])
    status = client.get(f"{base}/revisions/{body['id']}", headers=auth).json()
    assert (status["status"], status["stage"], status["error"]) == ("ready", "", "")
    content = client.get(base, headers=auth).json()["content"]
    assert content["slides"][5]["heading"] == "Comfort, briefly"
    missing = client.post(
        f"{base}/slides/9/revisions",
        {"instruction": "shorter"},
        content_type="application/json",
        headers=auth,
    )
    assert missing.status_code == 404
    theirs = create_token(user=outsider, name="script", scope="write").secret
    other = {"Authorization": f"Bearer {theirs}"}
    assert client.get(f"{base}/revisions/{body['id']}", headers=other).status_code == 404
    assert (
        client.post(
            f"{base}/slides/6/revisions",
            {"instruction": "longer"},
            content_type="application/json",
            headers=other,
        ).status_code
        == 404
    )
