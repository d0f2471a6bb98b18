from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import CommandError, CommandParser
from django.utils import translation

from billing.services import CreditSpent
from generation.answering import Answer, answer_question
from generation.citations import unsupported_sentences
from library.languages import reader_language
from library.models import Source
from notebooks.models import Conversation, Notebook
from ops.commands import DatabaseCommand
from providers.errors import ProviderError
from providers.local_model import join_running_server
from retrieval.chosen_sources import parse_source_ids, source_choice
from sharing import access
from sharing.models import Role
from texts.errors import UserFacingError


class Command(DatabaseCommand):
    help = "Ask a question in a notebook and print the answer with its citations."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question")
        parser.add_argument("--user", required=True, help="username of the owner")
        parser.add_argument("--notebook", required=True, help="notebook title")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--source", type=int, help="id of one of the notebook's sources: ask about it alone"
        )
        parser.add_argument(
            "--sources",
            help="ids of the notebook's sources, separated by commas: search only those "
            "(default: the sources ticked for you on the notebook page)",
        )
        parser.add_argument(
            "--conversation",
            type=int,
            help="id of one of your conversations in the notebook (the JSON's conversation_id): "
            "ask a follow-up in it",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        join_running_server()  # the local model `serve` runs, as its worker uses it
        user, notebook = self._notebook(options)
        source, chosen, conversation = self._asked(user, notebook, options)
        try:
            # A command has no reader: a refusal is written in the question's language.
            with translation.override(reader_language(options["question"])):
                answer = answer_question(
                    user=user,
                    notebook=notebook,
                    question=options["question"],
                    conversation=conversation,
                    source=source,
                    chosen_sources=chosen,
                )
        except (CreditSpent, ProviderError, UserFacingError) as exc:
            raise CommandError(str(exc)) from exc
        citations = _citations(answer)
        unsupported = unsupported_sentences(answer.message)
        if options["json"]:
            payload = {
                "answer": answer.message.content,
                "mode": answer.message.mode,
                "conversation_id": answer.conversation.pk,
                # The question as asked, or the standalone query a follow-up was rewritten
                # into for the search (RETRIEVAL_QUERY_REWRITE).
                "search_query": answer.search_query,
                # The sources searched (ticked, or --sources); null: all the notebook's.
                "source_ids": answer.message.source_ids,
                "citations": citations,
                # The sentences of a model's answer that no passage supports.
                "unsupported": unsupported,
            }
            self.stdout.write(json.dumps(payload, ensure_ascii=False))
            return
        self._print(answer, citations, unsupported)

    def _notebook(self, options: dict[str, Any]) -> tuple[User, Notebook]:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"There is no user {options['user']!r}.")
        try:
            notebook = access.find_notebook(user, options["notebook"], Role.EDITOR)
        except UserFacingError as exc:
            raise CommandError(str(exc)) from exc
        if notebook is None:
            raise CommandError(
                f"{options['user']} has no notebook {options['notebook']!r}; "
                "create it with `manage.py ingest`."
            )
        return user, notebook

    def _asked(
        self, user: User, notebook: Notebook, options: dict[str, Any]
    ) -> tuple[Source | None, list[int] | None, Conversation | None]:
        """The source asked about (--source), the sources searched, the conversation."""
        source = None
        if options["source"] is not None:
            source = access.notebook_sources(notebook).filter(pk=options["source"]).first()
            if source is None:
                raise CommandError(f"The notebook has no source {options['source']}.")
        chosen = source_choice(user=user, notebook=notebook).searched
        if options["sources"] is not None:
            try:
                chosen = parse_source_ids(options["sources"], notebook=notebook)
            except UserFacingError as exc:
                raise CommandError(str(exc)) from exc
        if source is not None:
            chosen = None  # asking about one source asks it, ticked or not
        conversation = None
        if options["conversation"] is not None:
            conversation = (
                access.own_conversations(user, notebook).filter(pk=options["conversation"]).first()
            )
            if conversation is None:
                raise CommandError(
                    f"The notebook has no conversation {options['conversation']} of yours."
                )
        return source, chosen, conversation

    def _print(
        self, answer: Answer, citations: list[dict[str, Any]], unsupported: list[str]
    ) -> None:
        if answer.message.mode == "extractive":
            self.stdout.write("(extractive answer: sentences quoted from the sources, no LLM)")
        if answer.question.search_query:
            self.stdout.write(f"(searched for: {answer.question.search_query})")
        self.stdout.write(answer.message.content)
        for citation, cited in zip(citations, answer.citations, strict=True):
            page = f", page {citation['page']}" if citation["page"] else ""
            # A slide's or a sheet's place, as the loaders label it (ingest/loaders/pptx.py,
            # sheets.py), says more than its number.
            label = cited.chunk.page_label if cited.chunk is not None else ""
            if label.startswith(("slide ", "rows ")):
                page = f", {label}"
            placed = ", placed by Loupe, not the model" if citation["attributed"] else ""
            self.stdout.write(
                f"[{citation['n']}] {citation['source']}{page} "
                f"(similarity {citation['similarity']:.3f}{placed})"
            )
        for sentence in unsupported:
            self.stdout.write(f"(no passage supports: {sentence})")


def _citations(answer: Answer) -> list[dict[str, Any]]:
    """The answer's citations as --json prints them."""
    return [
        {
            "n": citation.n,
            "chunk_id": citation.chunk_id,
            "source_id": citation.source_id,
            "source": citation.source_title,
            "page": citation.page,
            "quote": citation.quote,
            "similarity": citation.similarity,
            "supported": citation.supported,
            "attributed": citation.attributed,
        }
        for citation in answer.citations
    ]
