"""Ticking the sources a notebook's questions and documents use: remembered per person and
notebook, shown above the question box, stored with each answer, and with none ticked,
asking is off and says why."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from generation.answering import answer_question
from notebooks.models import Message, Notebook
from notebooks.tests.factories import make_source
from retrieval.chosen_sources import choose_sources, source_choice
from sharing.models import Membership
from texts.errors import UserFacingError

HERONS = b"Grey herons wait motionless at the edge of the pond for fish."
TRAINS = b"The night train to Vienna leaves the central station at eleven each evening."
OTTERS = b"Sea otters hold hands while they sleep so that they do not drift apart."


@pytest.fixture
def three(fake_openai, notebook, add_ready_source):
    return [
        add_ready_source(notebook, HERONS, "herons.txt"),
        add_ready_source(notebook, TRAINS, "trains.txt"),
        add_ready_source(notebook, OTTERS, "otters.txt"),
    ]


def choose(client, notebook, ticked=None, **flags):
    data = {"ticked": [source.pk for source in ticked or []], **flags}
    return client.post(
        reverse("notebooks:choose_sources", args=[notebook.pk]), data, HTTP_HX_REQUEST="true"
    )


def test_unticking_a_source_is_remembered_for_that_person_and_notebook(
    client, owner, notebook, three
):
    herons, trains, otters = three
    editor = get_user_model().objects.create_user(username="ed", password="ed-pass-123")
    Membership.objects.create(notebook=notebook, user=editor, role="editor")
    client.force_login(owner)

    response = choose(client, notebook, [herons, otters])

    assert response.status_code == 200
    assert "2 of 3 sources" in response.text  # the count above the question box, swapped in
    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text
    assert "2 of 3 sources" in page
    assert f'class="source source-ready source-unticked" id="source-{trains.pk}"' in page
    assert [s.pk for s in source_choice(user=owner, notebook=notebook).ticked] == [
        otters.pk,
        herons.pk,
    ]
    # The editor's choice is their own: everything, untouched.
    assert source_choice(user=editor, notebook=notebook).searched is None
    other = Notebook.objects.create(owner=owner, title="Other")
    assert source_choice(user=owner, notebook=other).everything


def test_all_and_none_tick_every_source_or_none(client, owner, notebook, three):
    client.force_login(owner)

    choose(client, notebook, none="1")
    assert source_choice(user=owner, notebook=notebook).ticked == []

    choose(client, notebook, all="1")
    assert source_choice(user=owner, notebook=notebook).searched is None


def test_with_none_ticked_asking_is_disabled_with_a_reason(client, owner, notebook, three):
    client.force_login(owner)

    response = choose(client, notebook, none="1")

    assert "No source is ticked" in response.text
    assert 'id="ask-button" disabled' in response.text
    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text
    assert 'id="ask-button" disabled' in page
    assert "No source is ticked: tick at least one source on the left to ask." in page
    with pytest.raises(UserFacingError, match="No source is ticked"):
        answer_question(user=owner, notebook=notebook, question="Herons?", chosen_sources=[])


def test_a_source_added_later_is_ticked(client, owner, notebook, three, add_ready_source):
    herons, _, _ = three
    choose_sources(user=owner, notebook=notebook, ticked=[herons.pk])

    later = make_source(owner=owner, notebook=notebook, title="Later")

    assert later in source_choice(user=owner, notebook=notebook).ticked


def test_the_answer_searches_and_cites_only_the_ticked_sources_and_stores_them(
    client, fake_openai, owner, notebook, three
):
    herons, trains, otters = three
    client.force_login(owner)
    choose(client, notebook, [herons, otters])
    # The model cites every passage it is given: none may be the unticked one's.
    fake_openai.chat_replies.append("Herons wait [1]. Otters sleep [2]. Trains [3].")

    response = client.post(
        reverse("notebooks:ask", args=[notebook.pk]),
        # The ticked sources hold enough of its words not to be refused as not covered.
        {"question": "When does the night train leave, and where do herons wait and otters sleep?"},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 200
    answer = Message.objects.get(role=Message.Role.ASSISTANT)
    assert answer.source_ids == sorted([herons.pk, otters.pk])
    assert {cited.source_id for cited in answer.citations.all()} <= {herons.pk, otters.pk}
    assert answer.citations.exists()
    prompt = fake_openai.chat_requests[-1].body["messages"][-1]["content"]
    assert "trains" not in prompt.lower()
    assert "From 2 chosen sources" in response.text


def test_asking_about_one_source_asks_it_even_when_unticked(
    client, fake_openai, owner, notebook, three
):
    herons, trains, _ = three
    client.force_login(owner)
    choose(client, notebook, [herons])
    fake_openai.chat_replies.append("It leaves at eleven [1].")

    client.post(
        reverse("notebooks:ask", args=[notebook.pk]),
        {"question": "When does the train leave?", "source": trains.pk},
    )

    answer = Message.objects.get(role=Message.Role.ASSISTANT)
    assert {cited.source_id for cited in answer.citations.all()} == {trains.pk}


def test_a_viewer_cannot_choose_sources(client, owner, notebook, three):
    viewer = get_user_model().objects.create_user(username="vi", password="vi-pass-123")
    Membership.objects.create(notebook=notebook, user=viewer, role="viewer")
    client.force_login(viewer)

    assert choose(client, notebook, none="1").status_code == 403
    assert (
        'class="source-tick"'
        not in client.get(reverse("notebooks:detail", args=[notebook.pk])).text
    )


def test_ids_of_another_notebook_are_refused(client, owner, outsider, notebook, three):
    theirs = Notebook.objects.create(owner=outsider, title="Theirs")
    foreign = make_source(owner=outsider, notebook=theirs, title="Foreign")
    client.force_login(owner)

    assert choose(client, notebook, [foreign]).status_code == 404
    assert source_choice(user=owner, notebook=notebook).everything


def test_an_outsider_and_an_anonymous_visitor_cannot_choose(client, outsider, notebook, three):
    assert choose(client, notebook, none="1").status_code == 302  # to sign in
    client.force_login(outsider)
    assert choose(client, notebook, none="1").status_code == 404
    assert source_choice(user=notebook.owner, notebook=notebook).everything


def test_the_one_statement_choice_agrees_with_the_full_one(owner, notebook, three):
    from library.models import Source
    from notebooks.models import NotebookSource
    from retrieval.chosen_sources import sources_to_ask
    from sharing import access

    # A generated document is searched, but never listed to be ticked.
    report = Source.objects.create(
        owner=owner,
        kind=Source.Kind.GENERATED,
        title="Report",
        sha256="e" * 64,
        status=Source.Status.READY,
    )
    NotebookSource.objects.create(notebook=notebook, source=report, added_by=owner)
    herons, trains, otters = three
    for ticked in ([herons, trains, otters], [herons], [], [otters, trains]):
        choose_sources(user=owner, notebook=notebook, ticked=[s.pk for s in ticked])
        full = source_choice(user=owner, notebook=notebook).searched
        asked = sources_to_ask(user=owner, notebook=notebook)
        assert asked.searched == (None if full is None else sorted(full))
        assert asked.sources == list(access.notebook_sources(notebook))
        assert report in asked.sources


def test_the_sources_to_ask_are_the_notebooks_live_links_for_every_reader(owner, outsider):
    from library.models import Source
    from notebooks.models import NotebookSource
    from retrieval.chosen_sources import sources_to_ask
    from sharing import access

    make = get_user_model().objects.create_user
    editor, curator = make("editor"), make("curator", is_staff=True)
    notebook = Notebook.objects.create(owner=owner, title="Shared")
    Membership.objects.create(notebook=notebook, user=editor, role="editor")
    own = make_source(owner=owner, notebook=notebook, title="owner's own")
    NotebookSource.objects.filter(source=own).update(added_by=owner)
    lent = make_source(
        owner=editor, notebook=Notebook.objects.create(owner=editor, title="e"), title="lent"
    )
    NotebookSource.objects.create(notebook=notebook, source=lent, added_by=editor)
    curated = Notebook.objects.create(owner=curator, title="curated")
    public = make_source(owner=curator, notebook=curated, title="public")
    Source.objects.filter(pk=public.pk).update(public=True, published_by=curator)
    gone = make_source(owner=curator, notebook=curated, title="was public")
    theirs = make_source(
        owner=outsider, notebook=Notebook.objects.create(owner=outsider, title="o"), title="forged"
    )
    NotebookSource.objects.create(notebook=notebook, source=public, added_by=editor)
    NotebookSource.objects.create(notebook=notebook, source=gone, added_by=editor)  # dead
    NotebookSource.objects.create(notebook=notebook, source=theirs, added_by=owner)  # dead
    choose_sources(user=editor, notebook=notebook, ticked=[own.pk, public.pk])

    expected = list(access.notebook_sources(notebook))
    assert {source.title for source in expected} == {"owner's own", "lent", "public"}
    for reader, searched in ((owner, None), (editor, sorted([own.pk, public.pk]))):
        asked = sources_to_ask(user=reader, notebook=notebook)
        assert asked.sources == expected
        assert asked.searched == searched
    # Someone who may not read the notebook is asked about none of it.
    assert sources_to_ask(user=outsider, notebook=notebook).sources == []


def test_a_failed_source_is_neither_ticked_nor_counted(client, owner, notebook, three):
    herons, trains, otters = three
    trains.status = trains.Status.FAILED
    trains.save(update_fields=["status"])
    client.force_login(owner)

    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).text

    assert "All 2 sources" in page
    assert f'id="tick-{trains.pk}" disabled' in page
    assert f'id="tick-{herons.pk}" checked' in page
    assert {s.pk for s in source_choice(user=owner, notebook=notebook).ticked} == {
        herons.pk,
        otters.pk,
    }
    # Unticking another counts the two that can be used.
    assert "1 of 2 sources" in choose(client, notebook, [herons]).text
