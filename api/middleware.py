"""The refusals Django and django-ninja make before any API view runs (a method the path
does not take, a path that is no route) answered in the API's JSON, as every other error
is: a program reads `code`, never an HTML page (docs/api.md)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase

_CODES = {404: "not_found", 405: "method_not_allowed"}


def _message(response: HttpResponseBase) -> str:
    if response.status_code == 405:
        return f"This path does not take that method; it takes {response.get('Allow', '')}."
    return "No such path: the routes are in /api/v1/openapi.json."


def json_refusals_middleware(
    get_response: Callable[[HttpRequest], HttpResponseBase],
) -> Callable[[HttpRequest], HttpResponseBase]:
    def middleware(request: HttpRequest) -> HttpResponseBase:
        response = get_response(request)
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

    return middleware
