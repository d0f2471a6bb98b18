"""The one exception whose message a person is shown. Pages and commands catch
UserFacingError and show what it says; any other exception is a bug and fails loudly.
Messages that quote a tool or an exception are kept free of server paths."""

from __future__ import annotations

import re


class UserFacingError(Exception):
    """A request that cannot be done as asked: str() is the message for the person who
    asked (translated where a page shows it), saying why and, where it can, what to do."""


# An absolute path's folders (`/srv/loupe/var/uploads/sources/`): not after a letter, a
# colon or a slash, so a URL's path (https://host/a/b) is left alone.
SERVER_FOLDERS = re.compile(r"(?<![\w:/.~])/(?:[^\s/'\"]+/)+")


def without_server_paths(message: str) -> str:
    """The message with the folders of any absolute path left out (the file name stays):
    where a server keeps its files is nobody's business but its operator's, and a tool's
    error (ffmpeg's, an OSError's) names them."""
    return SERVER_FOLDERS.sub("", message)
