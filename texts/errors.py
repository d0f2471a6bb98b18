"""The one exception whose message a person is shown. Pages and commands catch
UserFacingError and show what it says; any other exception is a bug and fails loudly."""

from __future__ import annotations


class UserFacingError(Exception):
    """A request that cannot be done as asked: str() is the message for the person who
    asked (translated where a page shows it), saying why and, where it can, what to do."""
