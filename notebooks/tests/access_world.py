"""The site's every URL (from the root URLconf) and a world of an owner's real objects to
fill their parameters, walked by notebooks' outsider walk and sharing's roles walk."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

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

    @property
    def is_api(self) -> bool:
        """/api/v1/ and the OpenAI-compatible /v1/: JSON for programs, token or session."""
        return self.text.startswith(("api/v1/", "v1/"))


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


SITE_ROUTES = [route for route in ROUTES if not route.is_admin and not route.is_api]


# The API's routes, walked with every method, as a session and as a token (a 401, never a
# redirect to sign in, for a caller without either).
API_ROUTES = [route for route in ROUTES if route.is_api]


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
    "token_id": lambda world, route: world.token.pk,
    "memory_id": lambda world, route: world.memory.pk,
    "reservation_id": lambda world, route: world.reservation.pk,
    "revision_id": lambda world, route: world.revision.pk,
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
    "studio:pptx": "the walk's document is a report; only a ready slide deck is exported",
    "studio:pdf": "the walk's document is a report; only a ready slide deck is exported",
    "studio:video": "the walk's document is a report; only a video overview has an MP4",
    "uploads:reserve": "the walk has no S3 bucket: direct uploads do not exist there",
    "uploads:confirm": "the walk has no S3 bucket: direct uploads do not exist there",
}


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
    token: object  # a personal access token of the owner's (api/)
    token_secret: str
    memory: object  # a fact the owner asked the chat to remember (memory/)
    reservation: object  # a direct upload of the owner's, never confirmed (ingest/)
    revision: object  # a slide revision the owner asked of the document, failed (generation/)


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
    from api.tokens import create_token

    made = create_token(user=owner, name=f"Token for {SECRET}s {MARKUP}", scope="write")
    from memory.models import Memory

    memory = Memory.objects.create(
        user=owner, notebook=notebook, text=f"I study {SECRET}s {MARKUP}"
    )
    from ingest.models import UploadReservation

    reservation = UploadReservation.objects.create(
        owner=owner,
        notebook=notebook,
        key=f"sources/direct/{SECRET}/{SECRET}.pdf",
        filename=f"{SECRET}{MARKUP}.pdf",
        size=10,
        content_type="application/pdf",
        pdf_capture="auto",
    )
    from generation.documents.models import SlideRevision

    revision = SlideRevision.objects.create(
        document=document,
        number=1,
        instruction=f"About {SECRET}s {MARKUP}",
        requested_by=owner,
        status=SlideRevision.Status.FAILED,
        error=f"It failed: {SECRET} {MARKUP}",
    )
    return World(
        revision=revision,
        reservation=reservation,
        memory=memory,
        token=made.token,
        token_secret=made.secret,
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


def route_url(route: Route, values: dict) -> str:
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


def route_values(route: Route, world: World, **overrides) -> dict:
    table = ADMIN_PARAMETERS if route.is_admin else SITE_PARAMETERS
    values = {param: table[param](world, route) for param in route.params}
    values.update({key: value for key, value in overrides.items() if key in values})
    return values


def hostile_data(world: World) -> dict:
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
        "text": "Intruder fact.",
    }


def hostile_json(world: World) -> dict:
    """A JSON body naming the owner's objects wherever the API reads an id from one, and
    filling what each operation requires, so that a refusal is about access, not input."""
    return {
        "question": "What does the other notebook say?",
        "conversation": world.conversation.pk,
        "source": world.pdf.pk,
        "title": "Taken over",
        "url": "https://example.org/",
        "content": "Intruder note.",
        "ticked": [world.pdf.pk],
        "posted": True,
        "kind": "report",
        "person": "outsider",
        "role": "editor",
        "model": f"notebook-{world.notebook.pk}",
        "messages": [{"role": "user", "content": "What does the other notebook say?"}],
        "text": "Intruder fact.",
        "goal": "custom",
        "length": "default",
        "instructions": "Answer as the intruder likes.",
        "answer": "0",
        "instruction": "Shorter, as the intruder likes.",
    }


def hostile_query(world: World) -> dict:
    return {
        "about": world.pdf.pk,
        "citation": world.citation.pk,
        "note_citation": world.note_citation.pk,
        "page": 1,
        "edit": 1,
    }


def response_body(response) -> bytes:
    if response.streaming:
        from asgiref.sync import async_to_sync

        async def read() -> bytes:
            return b"".join([part async for part in response.streaming_content])

        if hasattr(response.streaming_content, "__aiter__"):
            return async_to_sync(read)()
        return b"".join(response.streaming_content)
    return response.content


def is_login_redirect(response, login_url: str) -> bool:
    return response.status_code == 302 and response.url.startswith(login_url)
