"""A method a path does not take, and a path that is no route, are refused in the API's
JSON (with the Allow header for a 405), on /api/v1/ and on the OpenAI-compatible /v1/ alike;
the pages keep their HTML."""

from __future__ import annotations


def test_a_method_the_api_path_does_not_take_is_a_json_405(api, notebook):
    response = api.client.generic(
        "PATCH", f"/api/v1/notebooks/{notebook.pk}/sources", headers=api.headers
    )

    assert response.status_code == 405
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "method_not_allowed"
    assert set(response["Allow"].replace(" ", "").split(",")) == {"GET", "POST"}
    assert "GET" in response.json()["message"]


def test_a_path_that_is_no_route_is_a_json_404(api):
    response = api.get("/api/v1/no-such-thing")

    assert response.status_code == 404
    assert response.json() == {
        "code": "not_found",
        "message": "No such path: the routes are in /api/v1/openapi.json.",
        "field": None,
    }


def test_the_openai_endpoints_refuse_a_wrong_method_as_openai_clients_read_it(api):
    response = api.get("/v1/chat/completions")

    assert response.status_code == 405
    assert response["Allow"] == "POST"
    error = response.json()["error"]
    assert error["code"] == "method_not_allowed" and error["type"] == "invalid_request_error"


def test_a_page_keeps_its_html_405(client, owner, notebook):
    client.force_login(owner)

    response = client.get(f"/notebooks/{notebook.pk}/ask/")

    assert response.status_code == 405
    assert not response["Content-Type"].startswith("application/json")


def test_text_with_a_nul_character_is_refused_naming_its_field(api, notebook):
    """PostgreSQL stores no NUL in text: refused up front, not a 500 from deep inside."""
    asked = api.post(f"/api/v1/notebooks/{notebook.pk}/ask", {"question": "Herons\u0000?"})

    assert asked.status_code == 422, asked.content
    assert asked.json()["code"] == "invalid_input" and asked.json()["field"] == "body.question"

    searched = api.get("/api/v1/library/public?q=her%00ons")
    assert searched.status_code == 422 and searched.json()["field"] == "query.q"

    completed = api.post(
        "/v1/chat/completions",
        {"model": f"notebook-{notebook.pk}", "messages": [{"role": "user", "content": "a\u0000"}]},
    )
    assert completed.status_code == 422, completed.content
    assert completed.json()["error"]["param"] == "body.messages.0.content"
