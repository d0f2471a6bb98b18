"""The NinjaAPI of /api/v1/: its auth, its error handlers, its routers and its docs."""

from __future__ import annotations

import json

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI, Swagger
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.parser import Parser

from api.auth import READ
from api.errors import ApiError
from api.v1.schemas import NO_NUL, WORDS
from billing.services import CreditSpent, credit_spent_message
from providers.errors import ProviderError
from texts import message_of, translated
from texts.errors import UserFacingError


class ObjectParser(Parser):
    """JSON bodies are objects: a bare string or list is refused, never coerced."""

    def parse_body(self, request: HttpRequest) -> dict:
        try:
            body = json.loads(request.body)
        except (ValueError, UnicodeDecodeError):
            raise ApiError(400, "invalid_json", "The body is not JSON.", "body") from None
        if not isinstance(body, dict):
            raise ApiError(400, "invalid_json", "The body must be a JSON object.", "body")
        return body


api = NinjaAPI(
    title="Loupe API",
    version="1",
    description=(
        "Notebooks, sources, cited answers, notes and studio documents. Authenticate with "
        "`Authorization: Bearer <token>` (a personal access token from /tokens/); every error "
        "is JSON with a stable `code`, a `message` and, for bad input, the `field`."
    ),
    urls_namespace="api",
    auth=READ,
    # Swagger UI from the package's own static files, never a CDN.
    docs=Swagger(settings={"persistAuthorization": True}),
    docs_url="/docs",
    parser=ObjectParser(),
)


def _error(request: HttpRequest, status: int, code: str, message: str, field: str | None = None):
    return api.create_response(
        request, {"code": code, "message": message, "field": field}, status=status
    )


@api.exception_handler(ApiError)
def _api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
    return _error(request, exc.status, exc.code, exc.message, exc.field)


def _field(location: tuple | list) -> str:
    """`body.question` for (body, payload, question): the schema's parameter name left out."""
    parts = [str(part) for part in location]
    if len(parts) >= 3 and parts[0] in {"body", "form", "file"}:
        parts = [parts[0], *parts[2:]]
    return ".".join(parts)


# What a text that fails one of the schemas' patterns lacks, as a person would say it.
PATTERN_MEANS = {
    NO_NUL: "holds a NUL character, which cannot be stored",
    WORDS: "is empty or only spaces; write it in words",
}


@api.exception_handler(ValidationError)
def _invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    first = exc.errors[0] if exc.errors else {}
    field = _field(first.get("loc", ()))
    said = PATTERN_MEANS.get((first.get("ctx") or {}).get("pattern", ""), first.get("msg", ""))
    message = f"{field}: {said or 'invalid'}" if field else str(said)
    code = "invalid_json" if first.get("type") == "json_invalid" else "invalid_input"
    return _error(request, 422 if code == "invalid_input" else 400, code, message, field or None)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return _error(request, 401, "not_authenticated", "Send a token: Authorization: Bearer <token>.")


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    codes = {403: "csrf_failed", 404: "not_found", 405: "method_not_allowed"}
    code = codes.get(exc.status_code, "bad_request")
    return _error(request, exc.status_code, code, str(exc))


@api.exception_handler(Http404)
def _not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    # Other people's objects and missing ones alike: nothing tells them apart.
    return _error(request, 404, "not_found", str(exc) or "Not found.")


@api.exception_handler(PermissionDenied)
def _denied(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return _error(request, 403, "forbidden", str(exc) or "Not allowed.")


@api.exception_handler(CreditSpent)
def _credit_spent(request: HttpRequest, exc: CreditSpent) -> HttpResponse:
    return _error(request, 402, "credit_spent", credit_spent_message())


@api.exception_handler(ProviderError)
def _provider_failed(request: HttpRequest, exc: ProviderError) -> HttpResponse:
    return _error(request, 502, "model_failed", translated(message_of(exc)))


@api.exception_handler(UserFacingError)
def _refused(request: HttpRequest, exc: UserFacingError) -> HttpResponse:
    return _error(request, 400, "refused", translated(message_of(exc)))


from api.v1 import (  # noqa: E402
    account,
    chat,
    library,
    memory,
    notebooks,
    notes,
    sharing,
    sources,
    studio,
)

api.add_router("", account.router)
api.add_router("", notebooks.router)
api.add_router("", library.router)  # before sources: its /sources/link is a fixed path
api.add_router("", sources.router)
api.add_router("", chat.router)
api.add_router("", notes.router)
api.add_router("", memory.router)
api.add_router("", studio.router)
api.add_router("", sharing.router)
