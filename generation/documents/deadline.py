"""A document's whole generation within GENERATION_TIMEOUT_SECONDS: each chat call waits at
most what is left of it (and at most CHAT_TIMEOUT_SECONDS), and running out fails the
document saying which budget ran out, not that one call was slow."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.conf import settings

from generation.documents.inputs import GenerationFailed
from providers.chat import ChatReply, chat, chat_stream
from providers.errors import ProviderError
from texts import Text

# How often a reply being written says how far it got (the page and `generate` show it).
WRITTEN_EVERY_SECONDS = 2.0


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

    def written(
        self,
        messages: list[dict[str, str]],
        *,
        on_written: Callable[[str], None],
        **options: Any,
    ) -> ChatReply:
        """As `chat`, read as the model writes it: `on_written(text so far)` every
        WRITTEN_EVERY_SECONDS, so that a reply that takes a slow model minutes shows it is
        being written. The first word may take what the budget has left (a long prompt is
        read first), the next ones CHAT_IDLE_SECONDS each."""
        self.check()
        wait = min(settings.CHAT_TIMEOUT_SECONDS, self.remaining())
        told = time.monotonic()
        try:
            stream = chat_stream(messages, first_token_seconds=wait, **options)
            try:
                for _ in stream:
                    now = time.monotonic()
                    if now >= self.ends:
                        break
                    if now - told >= WRITTEN_EVERY_SECONDS:
                        on_written(stream.text)
                        told = now
            finally:
                stream.close()
        except ProviderError:
            self.check()  # the budget, not the call's own wait, ran out: say that
            raise
        self.check()
        return ChatReply(stream.text, stream.model, stream.finish_reason)
