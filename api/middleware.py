"""The refusals Django and django-ninja make before any API view runs (a method the path
does not take, a path that is no route) answered in the API's JSON, as every other error
is: a program reads `code`, never an HTML page (docs/api.md). And a /v1/ body whose text
holds a NUL character, which PostgreSQL cannot store, refused naming its field before the
view reads it (it would otherwise fail deep inside, as a 500)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.utils.decorators import sync_and_async_middleware

from api.errors import ApiError, refuse_nul

_CODES = {404: "not_found", 405: "method_not_allowed"}


def _message(response: HttpResponseBase) -> str:
    if response.status_code == 405:
        return f"This path does not take that method; it takes {response.get('Allow', '')}."
    return "No such path: the routes are in /api/v1/openapi.json."


def _with_nul(request: HttpRequest) -> HttpResponseBase | None:
    """A 422 as OpenAI's clients read one when the text of a /v1/ body holds a NUL
    (/api/v1/'s schemas refuse it field by field: NO_NUL)."""
    if not request.path_info.startswith("/v1/") or request.content_type != "application/json":
        return None
    try:
        body = json.loads(request.body) if request.body else None
    except ValueError:
        return None  # not JSON: the view says so
    try:
        refuse_nul(body)
    except ApiError as exc:
        error = {"message": exc.message, "type": "invalid_request_error", "code": exc.code}
        return JsonResponse({"error": {**error, "param": exc.field}}, status=exc.status)
    return None


def _in_json(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    code = _CODES.get(response.status_code)
    if code is None or response.get("Content-Type", "").startswith("application/json"):
        return response
    path = request.path_info
    if path.startswith("/api/v1/"):
        body: dict = {"code": code, "message": _message(response), "field": None}
    elif path.startswith("/v1/"):  # as OpenAI's clients read an error
        kind = "not_found_error" if code == "not_found" else "invalid_request_error"
        body = {"error": {"message": _message(response), "type": kind, "code": code}}
        body["error"]["param"] = None
    else:
        return response
    refused: HttpResponse = JsonResponse(body, status=response.status_code)
    if allowed := response.get("Allow"):
        refused["Allow"] = allowed
    return refused


# Both kinds, so that it does not make Django's own chain switch to sync for the view.
@sync_and_async_middleware
def json_refusals_middleware(get_response: Callable[[HttpRequest], Any]) -> Callable[..., Any]:
    if iscoroutinefunction(get_response):

        async def async_middleware(request: HttpRequest) -> HttpResponseBase:
            return _with_nul(request) or _in_json(request, await get_response(request))

        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponseBase:
        return _with_nul(request) or _in_json(request, get_response(request))

    return middleware
