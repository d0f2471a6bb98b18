"""The API's errors: JSON with a stable code (what a program branches on), a message for a
person, and the field at fault when one is."""

from __future__ import annotations

from typing import Any

from ninja import Schema


class ErrorOut(Schema):
    code: str
    message: str
    field: str | None = None


class ApiError(Exception):
    """A refusal with its HTTP status and stable code (docs/api.md lists the codes)."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field

    def body(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "field": self.field}


# The error responses every operation may give, for the OpenAPI document.
COMMON = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut, 429: ErrorOut}
# And those that spend credit.
BILLED = {**COMMON, 402: ErrorOut, 502: ErrorOut}


def refuse_nul(value: Any, where: str = "body") -> None:
    """ApiError naming the field when a text in `value` (a parsed JSON body) holds a NUL
    character: PostgreSQL stores no NUL in text, so it would otherwise
    fail deep inside, as a 500."""
    if isinstance(value, str):
        if "\x00" in value:
            message = f"{where}: text may not hold a NUL character (\\u0000)."
            raise ApiError(422, "invalid_input", message, where)
    elif isinstance(value, dict):
        for key, item in value.items():
            refuse_nul(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            refuse_nul(item, f"{where}.{index}")
