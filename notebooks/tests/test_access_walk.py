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

from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from library.models import Source
from notebooks.models import (
    Conversation,
    Message,
    Note,
    Notebook,
    UntickedSource,
)
from notebooks.tests.access_world import (
    ADMIN_PARAMETERS,
    ADMIN_ROUTES,
    API_ROUTES,
    LIVE_MARKUP,
    OWNER_MAY_GET_404,
    ROUTES,
    SECRET,
    SITE_PARAMETERS,
    SITE_ROUTES,
    Route,
    World,
    build_world,
    hostile_data,
    hostile_json,
    hostile_query,
    is_login_redirect,
    response_body,
    route_url,
    route_values,
)


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


@pytest.fixture
def world(owner, outsider) -> World:
    return build_world(owner, outsider)


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
        "documents": list(world.notebook.generated_documents.values_list("pk", "status")),
        "tokens": list(world.owner.access_tokens.values_list("pk", "revoked_at")),
        "members": list(world.notebook.memberships.values_list("pk", "user_id", "role")),
    }


def _requests(route: Route, world: World) -> Iterator[tuple[str, str]]:
    """(label, url) pairs: the owner's ids, and the outsider's own notebook with the owner's
    other ids (a view that checks only the notebook would leak there)."""
    yield "owner's ids", route_url(route, route_values(route, world))
    if not route.is_admin and "notebook_id" in route.params and len(route.params) > 1:
        mixed = route_values(route, world, notebook_id=world.theirs.pk)
        yield "outsider's notebook, owner's ids", route_url(route, mixed)


@pytest.mark.parametrize("route", SITE_ROUTES, ids=lambda route: route.text)
def test_an_outsider_sees_and_changes_nothing_of_the_owners(client, world, route, fake_openai):
    before = _snapshot(world)
    takes_owner_ids = bool(route.params)
    for label, url in _requests(route, world):
        for method in ("get", "post"):
            client.force_login(world.outsider)
            if method == "get":
                response = client.get(url, hostile_query(world))
            else:
                response = client.post(url, hostile_data(world))
            where = f"{method.upper()} {url} ({label})"
            assert SECRET.encode() not in response_body(response).lower(), where
            if takes_owner_ids:
                assert response.status_code in (404, 405) or is_login_redirect(
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
            assert SECRET.encode() not in response_body(response).lower(), where
            if route.name in PUBLIC_ROUTES:
                continue
            assert is_login_redirect(response, reverse("login")) or (
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
    body = response_body(response).decode(errors="replace")
    for live in LIVE_MARKUP:
        assert live not in body, f"{where}: the owner's data is rendered as live markup"


@pytest.mark.parametrize("route", SITE_ROUTES, ids=lambda route: route.text)
def test_the_owner_reaches_every_url_and_their_markup_stays_text(client, world, route, fake_openai):
    """The ids the walk uses are real (else the outsider's 404 would mean nothing), and
    the HTML in the owner's titles, file names, summaries, passages, questions and answers
    is shown as text on every page."""
    client.force_login(world.owner)
    url = route_url(route, route_values(route, world))

    response = client.get(url, {"about": world.pdf.pk})
    _assert_inert(response, f"GET {url}")
    if response.status_code == 405:
        response = client.post(url, {"question": "Why?", "title": "Mine", "url": "x"})
        _assert_inert(response, f"POST {url}")

    if route.params and route.name not in OWNER_MAY_GET_404:
        assert response.status_code != 404, url
        assert not is_login_redirect(response, reverse("login")), url


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
        values = route_values(route, world)
        if "object_id" in values:
            values["object_id"] = _admin_object_id(route, world)
        url = route_url(route, values)

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
                    assert SECRET.encode() not in response_body(response).lower(), where
                    if route.name in {"admin:login", "admin:logout"}:
                        continue
                    if not is_login_redirect(response, admin_login):
                        let_through.append(f"{where}: {response.status_code}")
    assert not let_through
    assert _snapshot(world) == before


# The API ---------------------------------------------------------------------------------

API_METHODS = ("get", "post", "put", "patch", "delete")
# What anyone may fetch: the API's own description.
API_PUBLIC_ROUTES = {
    "api:openapi-json": "the OpenAPI document",
    "api:openapi-view": "its documentation page",
    "api:api-root": "django-ninja's index of the API's URLs",
}


def test_the_walk_finds_the_apis_routes():
    names = {route.name for route in API_ROUTES}
    assert {"api:ask", "api:upload", "api:remove_note", "openai:chat_completions"} <= names


def _api_call(client, method: str, url: str, world: World, headers: dict):
    if method == "get":
        return client.get(url, hostile_query(world), headers=headers)
    if (
        url.endswith("/sources") and method == "post"
    ):  # the upload: multipart, as a program sends it
        return client.post(
            url, hostile_data(world) | {"file": hostile_data(world)["files"][0]}, headers=headers
        )
    return getattr(client, method)(
        url, hostile_json(world), content_type="application/json", headers=headers
    )


@pytest.mark.parametrize("route", API_ROUTES, ids=lambda route: f"{route.name} {route.text}")
def test_an_outsider_reaches_nothing_of_the_owners_through_the_api(
    client, world, route, fake_openai
):
    """As the outsider signed in and with their own write token, every method: a 404 (or
    405) for every URL that names the owner's objects, nothing of theirs in any answer (the
    owner's notebook named in a body too: /v1/chat/completions), nothing changed."""
    from api.tokens import create_token

    before = _snapshot(world)
    theirs = create_token(user=world.outsider, name="outsider's", scope="write").secret
    for label, url in _requests(route, world):
        for auth in ("session", "token"):
            client.logout()
            headers = {}
            if auth == "session":
                client.force_login(world.outsider)
            else:
                headers = {"Authorization": f"Bearer {theirs}"}
            for method in API_METHODS:
                response = _api_call(client, method, url, world, headers)
                where = f"{method.upper()} {url} ({label}, {auth})"
                assert response.status_code < 500, where
                assert SECRET.encode() not in response_body(response).lower(), where
                if route.text.startswith("v1/") and auth == "session":
                    # OpenAI's clients send a token; a session is not enough there.
                    assert response.status_code in (401, 405), f"{where}: {response.status_code}"
                elif route.params or route.name == "openai:chat_completions":
                    assert response.status_code in (404, 405), f"{where}: {response.status_code}"
    assert _snapshot(world) == before


@pytest.mark.parametrize("route", API_ROUTES, ids=lambda route: f"{route.name} {route.text}")
def test_an_api_caller_without_credentials_gets_401_json(client, world, route, fake_openai):
    before = _snapshot(world)
    revoked = world.token_secret
    world.token.revoke()
    for _label, url in _requests(route, world):
        for headers in ({}, {"Authorization": f"Bearer {revoked}"}):
            for method in API_METHODS:
                response = _api_call(client, method, url, world, headers)
                where = f"{method.upper()} {url} {headers}: {response.status_code}"
                assert SECRET.encode() not in response_body(response).lower(), where
                if route.name in API_PUBLIC_ROUTES or response.status_code == 405:
                    continue
                assert response.status_code == 401, where
                assert response.json()["error" if route.text.startswith("v1/") else "code"], where
    world.token.revoked_at = None
    world.token.save()
    assert _snapshot(world) == before


@pytest.mark.parametrize("route", API_ROUTES, ids=lambda route: f"{route.name} {route.text}")
def test_the_owner_reaches_every_api_url(client, world, route, fake_openai):
    """The ids the API walk uses are real: the owner's token gets no 404 from them."""
    if not route.params:
        return
    headers = {"Authorization": f"Bearer {world.token_secret}"}
    if route.name == "api:unpublish":  # what it takes back: the owner's PDF, published
        Source.objects.filter(pk=world.pdf.pk).update(public=True, published_by=world.owner)
    url = route_url(route, route_values(route, world))
    for method in API_METHODS:
        response = _api_call(client, method, url, world, headers)
        if response.status_code != 405:
            break
    assert response.status_code not in (401, 403, 404), (
        f"{method.upper()} {url}: {response.status_code} {response.content[:300]}"
    )
