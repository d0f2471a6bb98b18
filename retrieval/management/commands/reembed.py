from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from library import embedding_state, vector_indexes
from library.models import EmbeddingState
from ops.commands import DatabaseCommand
from ops.worker import drain_queue
from providers import embeddings
from providers.embeddings import EmbeddingModel
from retrieval.reembed import NothingToDo, start_reembed


class Command(DatabaseCommand):
    help = (
        "Switch the embedding model without downtime: embed every chunk with MODEL (default: "
        "the configured EMBEDDING_MODEL, or the local model) in the background while the "
        "current vectors keep serving, then switch in one transaction and drop the old ones. "
        "Running it again resumes an interrupted switch."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", help="embedding model to switch to")
        parser.add_argument(
            "--dimensions",
            type=int,
            help="dimensions to ask of it (default: EMBEDDING_DIMENSIONS for the configured "
            "model, else the model's own)",
        )
        parser.add_argument(
            "--wait", action="store_true", help="run the job in this process until it is done"
        )
        parser.add_argument(
            "--index",
            action="store_true",
            help="only build the active model's indexes (full text, HNSW) if missing "
            "(CONCURRENTLY: searches and writes go on; HNSW is slow and CPU-heavy for many "
            "chunks)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["index"]:
            self.build_index()
            return
        configured = embeddings.configured_model()
        name = options["model"] or configured.name
        dimensions = options["dimensions"]
        if dimensions is None and name == configured.name:
            dimensions = configured.dimensions
        try:
            state = start_reembed(model=EmbeddingModel(name, dimensions or None))
        except NothingToDo as exc:
            self.stdout.write(str(exc))
            return
        if not options["wait"]:
            self.stdout.write(
                f"Re-embedding {state.progress_total} chunks with {name} in the background "
                f"({state.progress_done} done); {state.active_model} serves until it switches."
            )
            return
        drain_queue("reembed")
        state = EmbeddingState.objects.get(pk=1)
        if state.target_model:
            raise CommandError(
                f"Not switched yet: {state.progress_done}/{state.progress_total} chunks have "
                f"{state.target_model} vectors; {state.active_model} still serves."
            )
        else:
            self.stdout.write(f"Switched to {state.active_model} ({state.progress_total} chunks).")

    def build_index(self) -> None:
        model = embedding_state.active_model()
        dimensions = vector_indexes.vector_dimensions(model=model)
        if dimensions is None:
            raise CommandError(f"No chunk has a vector by {model} yet: nothing to index.")
        text_name = vector_indexes.text_index_name(model=model)
        if vector_indexes.ensure_text_index(model=model):
            self.stdout.write(f"Built {text_name} (full text) for {model}.")
        else:
            self.stdout.write(f"{text_name} (full text) for {model} exists already.")
        name = vector_indexes.index_name(model=model, dimensions=dimensions)
        if vector_indexes.indexed_type(dimensions) is None:
            raise CommandError(
                f"{model} makes vectors of {dimensions} dimensions; HNSW indexes at most "
                "4,000: searches scan exactly."
            )
        if vector_indexes.ensure_vector_index(model=model, dimensions=dimensions):
            self.stdout.write(f"Built {name} for {model} ({dimensions} dimensions).")
        else:
            self.stdout.write(f"{name} for {model} ({dimensions} dimensions) exists already.")
