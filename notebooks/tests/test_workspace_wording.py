"""What the notebook page says in small places: a queued source waits its turn (or for a
worker, when none runs), a guide's shouted topic is in sentence case, and conversations that
began with the same question are told apart."""

from __future__ import annotations

from django.urls import reverse

from library.models import Source
from notebooks.models import Conversation, Message, SourceGuide
from notebooks.templatetags.notebook_tags import unshouted
from notebooks.tests.factories import make_source
from ops.tests.worker_traces import worker_seen


def test_a_queued_source_waits_its_turn_while_a_worker_runs(client, owner, notebook):
    source = make_source(owner=owner, notebook=notebook)
    Source.objects.filter(pk=source.pk).update(status=Source.Status.QUEUED)
    client.force_login(owner)
    url = reverse("notebooks:detail", args=[notebook.pk])

    assert "waiting for a worker: none is running" in client.get(url).text

    worker_seen(seconds_ago=1)
    page = client.get(url).text
    assert "waiting its turn" in page
    assert "waiting for a worker" not in page


def test_a_topic_in_capitals_is_shown_in_sentence_case(client, owner, notebook):
    assert unshouted("NETWORK SETUP") == "Network setup"
    assert unshouted("INTRODUCTION") == "Introduction"
    assert unshouted("APT") == "APT"
    assert unshouted("Package management") == "Package management"
    source = make_source(owner=owner, notebook=notebook)
    SourceGuide.objects.create(source=source, mode="outline", topics=["SYSTEM TIPS"])
    client.force_login(owner)
    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text
    assert '<span class="badge topic">System tips</span>' in page


def test_conversations_with_the_same_first_question_are_told_apart(client, owner, notebook):
    for _ in range(2):
        conversation = Conversation.objects.create(notebook=notebook, user=owner)
        Message.objects.create(conversation=conversation, role="user", content="Why herons?")
    other = Conversation.objects.create(notebook=notebook, user=owner)
    Message.objects.create(conversation=other, role="user", content="Why otters?")
    client.force_login(owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text

    assert page.count('<span class="conversation-when">') == 2
    assert "Why otters?</a>" in page
