"""Every URL of the site, walked as an outsider and as an anonymous visitor.

The list of URLs comes from the root URLconf itself (through every include), so a view added
later is walked without anyone remembering to add it here. Each path parameter is filled
from a table of real objects owned by the owner; a parameter name the table does not know
fails the walk, so that a new view cannot slip through with a value the test made up.

What must hold for every URL, GET and POST:
- anonymous: a redirect to sign in (the site's, or the admin's for admin URLs);
- outsider: 404, a redirect to sign in, or 405 (the method is refused before any object is
  looked up, so it says nothing about the owner's objects); pages without the owner's ids
  (the notebook list, usage, preferences) may answer 200 but show only the outsider's own;
- never a byte of the owner's titles, text, quotes or file names, and nothing of the
  owner's changed;
- the owner gets the same URL (not a 404): the ids the walk uses are real.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RegexPattern, RoutePattern

from ingest.notes import make_note_a_source
from ingest.tests.data import PDFS
from library.models import Chunk, Source
from notebooks.models import (
    Citation,
    Conversation,
    Message,
    Note,
    Notebook,
    NoteCitation,
    UntickedSource,
)
from notebooks.services import save_answer_as_note
from notebooks.tests.factories import make_cited_answer, make_source

# Every piece of the owner's data carries this word; no response to anyone else may.
SECRET = "zebracorn"
# And markup, which every page must show as text (escaped), the admin's included.
MARKUP = '<script>alert("zebracorn")</script><img src=x onerror=alert(1)>'
LIVE_MARKUP = ("<script>alert(", "<img src=x onerror")


@dataclass(frozen=True)
class Route:
    """One URL pattern of the site, with the route text through its includes."""

    parts: tuple[object, ...]  # the pattern objects from the root down
    name: str  # namespaced, "" when the pattern has none
    defaults: dict

    @property
    def text(self) -> str:
        return "".join(str(part) for part in self.parts)

    @property
    def params(self) -> list[str]:
        names: list[str] = []
        for part in self.parts:
            if isinstance(part, RoutePattern):
                names += re.findall(r"<(?:\w+:)?(\w+)>", str(part))
            elif isinstance(part, RegexPattern):
                names += list(re.compile(str(part)).groupindex)
        return names

    @property
    def is_admin(self) -> bool:
        return self.name.startswith("admin:") or self.text.startswith("admin/")


def _walk(patterns, parts=(), namespaces=()) -> Iterator[Route]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            namespace = (pattern.namespace,) if pattern.namespace else ()
            yield from _walk(
                pattern.url_patterns, (*parts, pattern.pattern), (*namespaces, *namespace)
            )
        elif isinstance(pattern, URLPattern):
            name = ":".join((*namespaces, pattern.name)) if pattern.name else ""
            yield Route(
                parts=(*parts, pattern.pattern), name=name, defaults=dict(pattern.default_args)
            )


ROUTES = list(_walk(get_resolver().url_patterns))
SITE_ROUTES = [route for route in ROUTES if not route.is_admin]
# The admin is walked too, but only as people who are not staff: staff see every user's
# data by design (it is where admins manage users, credit and sources).
ADMIN_ROUTES = [route for route in ROUTES if route.is_admin]

# The site's path parameters and which of the owner's objects fills each (a route may
# matter: a citation_id under the studio is a generated document's citation). A view with a
# parameter missing here fails test_every_path_parameter_has_a_real_object_to_fill_it.
SITE_PARAMETERS = {
    "notebook_id": lambda world, route: world.notebook.pk,
    "source_id": lambda world, route: world.pdf.pk,
    "conversation_id": lambda world, route: world.conversation.pk,
    "message_id": lambda world, route: world.message.pk,
    "citation_id": lambda world, route: (
        world.document_citation.pk if route.name.startswith("studio:") else world.citation.pk
    ),
    "page": lambda world, route: 1,
    "document_id": lambda world, route: world.document.pk,
    "number": lambda world, route: 1,
    "membership_id": lambda world, route: world.membership.pk,
    "note_id": lambda world, route: world.note.pk,
    "note_citation_id": lambda world, route: world.note_citation.pk,
}
# The admin's own parameters; the admin refuses anyone who is not staff before it reads them.
ADMIN_PARAMETERS = {
    "object_id": lambda world, route: world.notebook.pk,
    "id": lambda world, route: world.owner.pk,
    "content_type_id": lambda world, route: 1,
    "app_label": lambda world, route: "notebooks",
    "url": lambda world, route: "notebooks/notebook/",
}
# Routes the owner may get a 404 from with the walk's objects, and why. The outsider's
# side of these is still walked.
OWNER_MAY_GET_404 = {
    "studio:csv": "the walk's document is a report; only a ready table has a CSV",
    "studio:svg": "the walk's document is a report; only mind maps and infographics draw",
    "studio:audio": "the walk's document is a report; only an audio overview has sound",
    "studio:quiz_answer": "the walk's document is a report; only a quiz has questions",
}


def test_the_walk_finds_the_sites_views():
    """Guards the walker itself: an URLconf it failed to read would make every test pass."""
    names = {route.name for route in SITE_ROUTES}
    assert {"notebooks:detail", "notebooks:citation", "notebooks:page_image", "login"} <= names
    assert len(ADMIN_ROUTES) > 20


@pytest.mark.parametrize("route", ROUTES, ids=lambda route: route.text)
def test_every_path_parameter_has_a_real_object_to_fill_it(route):
    known = ADMIN_PARAMETERS if route.is_admin else SITE_PARAMETERS
    unknown = [param for param in route.params if param not in known]
    assert not unknown, (
        f"{route.text} takes {unknown}, which the access walk cannot fill: add a real object "
        "of the owner's for it to SITE_PARAMETERS in notebooks/tests/test_access_walk.py"
    )


@dataclass
class World:
    owner: User
    outsider: User
    notebook: Notebook
    theirs: Notebook  # the outsider's own notebook, to mix with the owner's ids
    pdf: Source
    conversation: Conversation
    message: Message
    citation: Citation
    document: object  # a ready generated report, with one citation
    document_citation: object
    membership: object  # the notebook shared with a third person, as viewer
    note: Note  # an answer saved to a note (private), made a source of the notebook
    note_citation: NoteCitation


@pytest.fixture
def world(owner, outsider) -> World:
    return build_world(owner, outsider)


def build_world(owner, outsider) -> World:
    """The owner's objects, each carrying SECRET and MARKUP (also for sharing/tests)."""
    notebook = Notebook.objects.create(owner=owner, title=f"Zebracorn research {MARKUP}")
    pdf = make_source(owner=owner, notebook=notebook, title=f"Zebracorn ledger {MARKUP}")
    pdf.kind, pdf.page_count = Source.Kind.PDF, 1
    pdf.summary = f"A summary about the {SECRET} herd. {MARKUP}"
    pdf.file.save(f"{SECRET}.pdf", ContentFile((PDFS / "pypdf" / "crazyones.pdf").read_bytes()))
    pdf.filename = f"{SECRET}{MARKUP}.pdf"
    pdf.save()
    text = make_source(owner=owner, notebook=notebook, title=f"Notes on {SECRET}s")
    Source.objects.filter(pk=text.pk).update(
        status=Source.Status.FAILED, error=f"Failed: {SECRET} {MARKUP}"
    )
    citation = make_cited_answer(
        notebook=notebook, source=pdf, content=f"The {SECRET} sleeps standing [1]. {MARKUP}"
    )
    quote = f"Every {SECRET} sleeps standing. {MARKUP}"
    assert citation.chunk_id is not None
    Chunk.objects.filter(pk=citation.chunk_id).update(text=quote)
    Citation.objects.filter(pk=citation.pk).update(quote=quote, source_title=pdf.title)
    Message.objects.filter(conversation=citation.message.conversation, role="user").update(
        content=f"Tell me about {SECRET}s {MARKUP}"
    )
    conversation = citation.message.conversation
    conversation.title = f"Talk about {SECRET}s {MARKUP}"
    conversation.save()
    Chunk.objects.create(
        source=text,
        ordinal=0,
        text=f"The {SECRET} is a striped unicorn. {MARKUP}",
        char_start=0,
        char_end=30,
        embedding=[0.1] * 3,
        embedding_model="m",
    )
    theirs = Notebook.objects.create(owner=outsider, title="Outsider's own")
    make_source(owner=outsider, notebook=theirs, title="Outsider's notes")
    from generation.models import DocumentCitation, GeneratedDocument

    document = GeneratedDocument.objects.create(
        notebook=notebook,
        owner=owner,
        kind=GeneratedDocument.Kind.REPORT,
        status=GeneratedDocument.Status.FAILED,
        title=f"Report on {SECRET}s {MARKUP}",
        error=f"It failed: {MARKUP}",
    )
    document_citation = DocumentCitation.objects.create(
        document=document,
        n=1,
        chunk_id=citation.chunk_id,
        source=pdf,
        source_title=pdf.title,
        page=1,
        quote=quote,
        similarity=0.8,
    )
    from sharing.models import Membership

    member = get_user_model().objects.create_user(username="member", password="member-pass-1")
    membership = Membership.objects.create(notebook=notebook, user=member, role="viewer")
    note = save_answer_as_note(user=owner, message=citation.message)
    Note.objects.filter(pk=note.pk).update(title=f"Note on {SECRET}s {MARKUP}")
    note.refresh_from_db()
    make_note_a_source(note=note)
    note.refresh_from_db()
    return World(
        note=note,
        note_citation=note.citations.get(),
        membership=membership,
        owner=owner,
        outsider=outsider,
        notebook=notebook,
        theirs=theirs,
        pdf=pdf,
        conversation=conversation,
        message=citation.message,
        citation=citation,
        document=document,
        document_citation=document_citation,
    )


def _url(route: Route, values: dict) -> str:
    if all(isinstance(part, RoutePattern) for part in route.parts):
        return "/" + re.sub(
            r"<(?:\w+:)?(\w+)>", lambda match: str(values[match.group(1)]), route.text
        )
    if route.name:
        return reverse(route.name, kwargs={name: values[name] for name in route.params})
    # An unnamed regex route (the admin's catch-all): fill its groups by hand.
    text = "".join(
        str(part).lstrip("^").rstrip("$") if isinstance(part, RegexPattern) else str(part)
        for part in route.parts
    )
    return "/" + re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda match: str(values[match.group(1)]), text)


def _values(route: Route, world: World, **overrides) -> dict:
    table = ADMIN_PARAMETERS if route.is_admin else SITE_PARAMETERS
    values = {param: table[param](world, route) for param in route.params}
    values.update({key: value for key, value in overrides.items() if key in values})
    return values


def _hostile_data(world: World) -> dict:
    """POST fields that name the owner's objects wherever a view reads an id from the form."""
    return {
        "question": "What does the other notebook say?",
        "conversation": world.conversation.pk,
        "source": world.pdf.pk,
        "title": "Taken over",
        "url": "https://example.org/",
        "pdf_capture": "text",
        "files": [SimpleUploadedFile("intruder.txt", b"Intruder text.", "text/plain")],
        "content": "Intruder note.",
        "ticked": [world.pdf.pk],
        "none": "1",
        "posted": "1",
        "goal": "custom",
        "length": "longer",
        "instructions": "Intruder instructions.",
    }


def _hostile_query(world: World) -> dict:
    return {
        "about": world.pdf.pk,
        "citation": world.citation.pk,
        "note_citation": world.note_citation.pk,
        "page": 1,
        "edit": 1,
    }


def _body(response) -> bytes:
    if response.streaming:
        from asgiref.sync import async_to_sync

        async def read() -> bytes:
            return b"".join([part async for part in response.streaming_content])

        if hasattr(response.streaming_content, "__aiter__"):
            return async_to_sync(read)()
        return b"".join(response.streaming_content)
    return response.content


def _snapshot(world: World) -> dict:
    """What an outsider's request must not change."""
    return {
        "notebooks": list(Notebook.objects.filter(owner=world.owner).values_list("pk", "title")),
        "conversations": list(
            Conversation.objects.filter(notebook=world.notebook).values_list("pk", "title")
        ),
        "messages": Message.objects.count(),
        "notes": list(
            Note.objects.order_by("pk").values_list("pk", "title", "content", "posted", "source")
        ),
        "unticked": list(UntickedSource.objects.values_list("pk", "user", "source")),
        "style": list(
            Notebook.objects.filter(owner=world.owner).values_list(
                "pk", "chat_goal", "chat_length", "chat_instructions"
            )
        ),
        "sources": list(
            Source.objects.order_by("pk").values_list("pk", "owner_id", "status", "title")
        ),
    }


def _requests(route: Route, world: World) -> Iterator[tuple[str, str]]:
    """(label, url) pairs: the owner's ids, and the outsider's own notebook with the owner's
    other ids (a view that checks only the notebook would leak there)."""
    yield "owner's ids", _url(route, _values(route, world))
    if not route.is_admin and "notebook_id" in route.params and len(route.params) > 1:
        mixed = _values(route, world, notebook_id=world.theirs.pk)
        yield "outsider's notebook, owner's ids", _url(route, mixed)


def _is_login_redirect(response, login_url: str) -> bool:
    return response.status_code == 302 and response.url.startswith(login_url)


@pytest.mark.parametrize("route", SITE_ROUTES, ids=lambda route: route.text)
def test_an_outsider_sees_and_changes_nothing_of_the_owners(client, world, route, fake_openai):
    before = _snapshot(world)
    takes_owner_ids = bool(route.params)
    for label, url in _requests(route, world):
        for method in ("get", "post"):
            client.force_login(world.outsider)
            if method == "get":
                response = client.get(url, _hostile_query(world))
            else:
                response = client.post(url, _hostile_data(world))
            where = f"{method.upper()} {url} ({label})"
            assert SECRET.encode() not in _body(response).lower(), where
            if takes_owner_ids:
                assert response.status_code in (404, 405) or _is_login_redirect(
                    response, reverse("login")
                ), f"{where}: {response.status_code}"
    assert _snapshot(world) == before


@pytest.mark.parametrize("route", SITE_ROUTES, ids=lambda route: route.text)
def test_an_anonymous_visitor_is_sent_to_sign_in(client, world, route, fake_openai):
    before = _snapshot(world)
    for label, url in _requests(route, world):
        for method in ("get", "post"):
            response = getattr(client, method)(url)
            where = f"{method.upper()} {url} ({label})"
            assert SECRET.encode() not in _body(response).lower(), where
            if route.name in PUBLIC_ROUTES:
                continue
            assert _is_login_redirect(response, reverse("login")) or (
                response.status_code == 405 and route.name in POST_ONLY_BEFORE_LOGIN
            ), f"{where}: {response.status_code}"
    assert _snapshot(world) == before


# What anyone may open, and why; every other URL must send an anonymous visitor to sign in.
PUBLIC_ROUTES = {
    "home": "the front door: a redirect to the notebook list (which asks to sign in)",
    "login": "signing in",
    "logout": "signing out",
    "set_language": "choosing the interface language, also on the sign-in page",
}
# None so far: a view that refuses the method before asking to sign in goes here.
POST_ONLY_BEFORE_LOGIN: set[str] = set()


def _assert_inert(response, where: str) -> None:
    body = _body(response).decode(errors="replace")
    for live in LIVE_MARKUP:
        assert live not in body, f"{where}: the owner's data is rendered as live markup"


@pytest.mark.parametrize("route", SITE_ROUTES, ids=lambda route: route.text)
def test_the_owner_reaches_every_url_and_their_markup_stays_text(client, world, route, fake_openai):
    """The ids the walk uses are real (else the outsider's 404 would mean nothing), and
    the HTML in the owner's titles, file names, summaries, passages, questions and answers
    is shown as text on every page."""
    client.force_login(world.owner)
    url = _url(route, _values(route, world))

    response = client.get(url, {"about": world.pdf.pk})
    _assert_inert(response, f"GET {url}")
    if response.status_code == 405:
        response = client.post(url, {"question": "Why?", "title": "Mine", "url": "x"})
        _assert_inert(response, f"POST {url}")

    if route.params and route.name not in OWNER_MAY_GET_404:
        assert response.status_code != 404, url
        assert not _is_login_redirect(response, reverse("login")), url


def _admin_object_id(route: Route, world: World) -> str:
    """The first object of the model an admin URL is about (admin/<app>/<model>/...)."""
    from django.apps import apps

    parts = route.text.split("/")
    try:
        model = apps.get_model(parts[1], parts[2])
    except (LookupError, ValueError, IndexError):
        return str(world.notebook.pk)
    first = model._default_manager.order_by("pk").first()
    return str(first.pk) if first else "1"


def test_the_owners_markup_stays_text_in_the_admin(client, world):
    """One test for the whole admin: a world per URL (some hundred) would cost minutes."""
    admin = get_user_model().objects.create_superuser("admin", "admin@example.org", "pw")
    client.force_login(admin)
    pages = 0
    for route in ADMIN_ROUTES:
        if not route.name:
            continue  # the catch-all and the redirects to a change page
        values = _values(route, world)
        if "object_id" in values:
            values["object_id"] = _admin_object_id(route, world)
        url = _url(route, values)

        response = client.get(url)

        # 403 and 404 are the admin's own refusals (read-only models, no such object).
        assert response.status_code < 500, f"GET {url}: {response.status_code}"
        _assert_inert(response, f"GET {url}")
        pages += response.status_code == 200
    assert pages > 20


def test_the_admin_lets_no_one_but_staff_in(client, world):
    admin_login = reverse("admin:login")
    before = _snapshot(world)
    let_through = []
    for route in ADMIN_ROUTES:
        for who in (world.outsider, world.owner, None):
            for _label, url in _requests(route, world):
                for method in ("get", "post"):
                    client.logout()
                    if who is not None:
                        client.force_login(who)
                    response = getattr(client, method)(url)
                    where = f"{method.upper()} {url} as {who or 'anonymous'}"
                    assert SECRET.encode() not in _body(response).lower(), where
                    if route.name in {"admin:login", "admin:logout"}:
                        continue
                    if not _is_login_redirect(response, admin_login):
                        let_through.append(f"{where}: {response.status_code}")
    assert not let_through
    assert _snapshot(world) == before
