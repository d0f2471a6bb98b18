"""A document's whole generation within GENERATION_TIMEOUT_SECONDS: each chat call waits at
most what is left of it (and at most CHAT_TIMEOUT_SECONDS), and running out fails the
document saying which budget ran out, not that one call was slow."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings

from generation.documents.inputs import GenerationFailed
from providers.chat import ChatReply, chat
from providers.errors import ProviderError
from texts import Text


class Deadline:
    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = settings.GENERATION_TIMEOUT_SECONDS if seconds is None else seconds
        self.ends = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return self.ends - time.monotonic()

    def check(self) -> None:
        """GenerationFailed once the budget is spent."""
        if self.remaining() <= 0:
            raise GenerationFailed(
                Text(
                    "Generating took longer than GENERATION_TIMEOUT_SECONDS (%(seconds)s s) "
                    "allows; raise it for a slow model server, or generate from fewer "
                    "sources or at a shorter length.",
                    seconds=f"{self.seconds:g}",
                )
            )

    def chat(self, messages: list[dict[str, str]], **options: Any) -> ChatReply:
        """providers.chat.chat, waiting no longer than the budget has left."""
        self.check()
        timeout = min(settings.CHAT_TIMEOUT_SECONDS, self.remaining())
        try:
            return chat(messages, timeout=timeout, **options)
        except ProviderError:
            self.check()  # the budget, not the call's own wait, ran out: say that
            raise
