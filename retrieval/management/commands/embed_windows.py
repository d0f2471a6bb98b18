from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from library import embedding_state
from ops.commands import DatabaseCommand
from providers.errors import ProviderError
from retrieval import profiles, windows


class Command(DatabaseCommand):
    help = (
        "Embed the parts (RETRIEVAL_WINDOW_WORDS words) of every chunk of the active model "
        "that has none yet, for hybrid search (retrieval/windows.py): chunks written before "
        "windows existed or while RETRIEVAL_WINDOWS was off. New sources get them at ingest. "
        "Resumable; searches go on meanwhile."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        model = embedding_state.active()
        if not windows.enabled_for(model.name):
            raise CommandError(
                f"Windows are off for {model.name}: set RETRIEVAL_WINDOWS=on (or local, for "
                f"the local models {', '.join(profiles.windowed_models())})."
            )

        def report(done: int, total: int) -> None:
            self.stdout.write(f"{done}/{total} chunks", ending="\r")
            self.stdout.flush()

        try:
            made = windows.build_missing(model=model, on_batch=report)
        except ProviderError as exc:
            raise CommandError(f"Embedding failed: {exc}") from exc
        self.stdout.write(f"\n{made} windows embedded by {model.name}.")
