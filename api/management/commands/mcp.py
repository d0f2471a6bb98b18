"""manage.py mcp: the MCP server over stdio, for an agent that starts it as a subprocess."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import CommandError, CommandParser

from api import mcp_server
from api.tokens import find_token
from ops.commands import DatabaseCommand


class Command(DatabaseCommand):
    help = (
        "Serve Loupe's MCP tools over stdio, as the user of a personal access token "
        "(--token, or LOUPE_TOKEN in the environment)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--token", default="", help="a personal access token (manage.py token)")

    def handle(self, *args: Any, **options: Any) -> None:
        secret = options["token"] or os.environ.get("LOUPE_TOKEN", "")
        if not secret or find_token(secret) is None:
            raise CommandError(
                "Give a live token: --token or LOUPE_TOKEN (manage.py token create)."
            )
        mcp_server.stdio_token = secret
        # stdout is the protocol's; nothing else may be written there.
        mcp_server.server.run("stdio")
