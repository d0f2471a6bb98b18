from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from billing.services import CreditSpent
from generation.answering import answer_question
from notebooks.models import Notebook
from providers.errors import ProviderError


class Command(BaseCommand):
    help = "Ask a question in a notebook and print the answer with its citations."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question")
        parser.add_argument("--user", required=True, help="username of the owner")
        parser.add_argument("--notebook", required=True, help="notebook title")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--source", type=int, help="id of one of the notebook's sources: ask about it alone"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        user = User.objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"There is no user {options['user']!r}.")
        notebook = Notebook.objects.filter(owner=user, title=options["notebook"]).first()
        if notebook is None:
            raise CommandError(
                f"{options['user']} has no notebook {options['notebook']!r}; "
                "create it with `manage.py ingest`."
            )
        source = None
        if options["source"] is not None:
            source = notebook.sources.filter(pk=options["source"]).first()
            if source is None:
                raise CommandError(f"The notebook has no source {options['source']}.")
        try:
            answer = answer_question(
                user=user, notebook=notebook, question=options["question"], source=source
            )
        except (CreditSpent, ProviderError, ValueError) as exc:
            raise CommandError(str(exc)) from exc

        citations = [
            {
                "n": citation.n,
                "chunk_id": citation.chunk_id,
                "source_id": citation.source_id,
                "source": citation.source_title,
                "page": citation.page,
                "quote": citation.quote,
                "similarity": citation.similarity,
                "supported": citation.supported,
            }
            for citation in answer.citations
        ]
        if options["json"]:
            payload = {
                "answer": answer.message.content,
                "mode": answer.message.mode,
                "citations": citations,
            }
            self.stdout.write(json.dumps(payload, ensure_ascii=False))
            return
        if answer.message.mode == "extractive":
            self.stdout.write("(extractive answer: sentences quoted from the sources, no LLM)")
        self.stdout.write(answer.message.content)
        for citation in citations:
            page = f", page {citation['page']}" if citation["page"] else ""
            self.stdout.write(
                f"[{citation['n']}] {citation['source']}{page} "
                f"(similarity {citation['similarity']:.3f})"
            )
