from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from evaluation.pages import evaluate_pages, ingest_pdfs, load_offtopic, load_page_items
from evaluation.places import evaluate_places, load_place_items
from evaluation.recall import (
    EvaluationError,
    evaluate,
    evaluate_followups,
    ingest_documents,
    load_followups,
    load_items,
    require_chat_model,
)
from notebooks.models import Notebook
from ops.commands import DatabaseCommand


class Command(DatabaseCommand):
    help = (
        "Measure retrieval on a question set: ingest DIR/<doc_id>.txt for the documents the "
        "questions name into a fresh notebook (documents the user added before are linked, "
        "not embedded again), run the normal search for every question, and print "
        "recall@1/4/8, MRR and latency percentiles. A question whose answer no chunk "
        "contains counts as a miss and is reported as unanswerable. With --followups, "
        "follow-up questions are searched as asked and as rewritten from their conversation "
        "by the chat model (query rewriting off and on), and both figures are printed. "
        "With --pages, answers are measured instead: every question of a page-gold set is "
        "asked through the normal answer path in a notebook holding its PDF (DIR/<doc>), and "
        "the gold page among the passages @1/4/8, the gold page cited, the refusals and the "
        "quotes found in their page's chunks are printed per language; --offtopic adds "
        "questions the documents cannot answer (refused: nothing cited). With --places, "
        "office files, e-books and web files are measured the same way on a place-gold set "
        "(DIR/<file>): per kind of file, the quotes found in chunks, at their place (slide, "
        "sheet, section), that place among the passages @1/4/8 and cited."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--qa", type=Path, help="ITEMS.jsonl")
        parser.add_argument(
            "--followups",
            type=Path,
            help="FOLLOWUPS.jsonl: earlier turns, a follow-up question and its answers per "
            "line; measures query rewriting (needs a chat model)",
        )
        parser.add_argument(
            "--pages",
            type=Path,
            help="QUESTIONS.jsonl: doc, lang, question, page, also_answered_on and quote per "
            "line; measures the answers (every question is a billed answer)",
        )
        parser.add_argument(
            "--places",
            type=Path,
            help="QUESTIONS.jsonl: file, lang, question, quote and where (slide, sheet, "
            "heading_path or section) per line; measures the answers per kind of file",
        )
        parser.add_argument(
            "--offtopic",
            type=Path,
            help="OFFTOPIC.jsonl (with --pages): doc, lang and a question the doc cannot answer",
        )
        parser.add_argument(
            "--docs",
            required=True,
            type=Path,
            help="folder of <doc_id>.txt (--qa, --followups) or of the PDFs --pages names",
        )
        parser.add_argument(
            "--answers",
            action="store_true",
            help="with --pages or --places: every answer read as a person would (its text, "
            "cited pages or places, gold cited, sentences with a verified citation, only "
            "markers, seconds)",
        )
        parser.add_argument(
            "--limit",
            type=int,
            default=0,
            help="with --pages or --places: the first N questions (0: all)",
        )
        parser.add_argument("--k", type=int, default=8, help="passages per question (8)")
        parser.add_argument("--user", default="evaluate", help="owner of the documents")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["k"] < 1:
            raise CommandError("--k must be at least 1.")
        if options["pages"] is not None or options["places"] is not None:
            if options["qa"] is not None or options["followups"] is not None:
                raise CommandError(
                    "--pages and --places measure answers alone; run --qa/--followups apart."
                )
            if options["pages"] is not None and options["places"] is not None:
                raise CommandError("Run --pages and --places apart.")
            if options["places"] is not None and options["offtopic"] is not None:
                raise CommandError("--offtopic goes with --pages QUESTIONS.jsonl.")
        elif options["offtopic"] is not None:
            raise CommandError("--offtopic goes with --pages QUESTIONS.jsonl.")
        elif options["qa"] is None and options["followups"] is None:
            raise CommandError(
                "Give --qa ITEMS.jsonl, --followups FOLLOWUPS.jsonl (or both), --pages "
                "QUESTIONS.jsonl or --places QUESTIONS.jsonl."
            )
        User = get_user_model()
        user, created = User.objects.get_or_create(username=options["user"])
        if created:
            user.set_unusable_password()
            user.save()
        if options["pages"] is not None:
            self._handle_pages(user, options)
            return
        if options["places"] is not None:
            self._handle_places(user, options)
            return
        notebook = Notebook.objects.create(
            owner=user,
            title=f"evaluate {options['qa'] or options['followups']} "
            f"{timezone.now():%Y-%m-%d %H:%M:%S}",
        )
        report = followups = None
        try:
            items = load_items(options["qa"]) if options["qa"] else []
            followup_items = load_followups(options["followups"]) if options["followups"] else []
            if followup_items:
                require_chat_model()  # before the documents are read, which takes long
            ingest_documents(
                user=user,
                notebook=notebook,
                docs=options["docs"],
                doc_ids=[item.doc_id for item in items] + [item.doc_id for item in followup_items],
            )
            if items:
                report = evaluate(user=user, notebook=notebook, items=items, k=options["k"])
            if followup_items:
                followups = evaluate_followups(
                    user=user, notebook=notebook, items=followup_items, k=options["k"]
                )
        except EvaluationError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            # The documents stay in the user's library, so the next run links them.
            notebook.delete()

        figures = report.as_dict() if report else {}
        if followups:
            figures["followups"] = followups.as_dict()
        if options["json"]:
            self.stdout.write(json.dumps(figures))
            return
        if report:
            self._print_report(figures)
        if followups:
            self._print_followups(figures["followups"])

    def _print_report(self, figures: dict[str, Any]) -> None:
        self.stdout.write(
            f"{figures['questions']} questions over {figures['chunks']} chunks, "
            f"k = {figures['k']}; {figures['unanswerable']} unanswerable (no chunk contains the "
            "answer; counted as misses)"
        )
        for name, value in figures.items():
            if name.startswith(("recall@", "mrr@")):
                self.stdout.write(f"{name:>10}  {value:.3f}")
        self.stdout.write(
            f"latency  p50 {figures['p50_ms']} ms, p95 {figures['p95_ms']} ms "
            f"(search alone: p50 {figures['search_p50_ms']} ms, "
            f"p95 {figures['search_p95_ms']} ms)"
        )

    def _print_followups(self, figures: dict[str, Any]) -> None:
        off, on = figures["rewrite_off"], figures["rewrite_on"]
        self.stdout.write(
            f"{off['questions']} follow-up questions, searched as asked (rewrite off) and as "
            f"rewritten by the chat model (rewrite on: {on['rewritten']} changed, "
            f"{on['rewrite_failures']} failed and searched as asked)"
        )
        self.stdout.write(f"{'':>10}  {'off':>6}  {'on':>6}")
        for name, value in off.items():
            if name.startswith(("recall@", "mrr@")):
                self.stdout.write(f"{name:>10}  {value:6.3f}  {on[name]:6.3f}")
        self.stdout.write(
            f"rewrite latency  p50 {on['rewrite_p50_ms']} ms, p95 {on['rewrite_p95_ms']} ms "
            "(before the search)"
        )

    def _handle_places(self, user: Any, options: dict[str, Any]) -> None:
        notebooks = {}
        try:
            items = load_place_items(options["places"])
            if options["limit"]:
                items = items[: options["limit"]]
            notebooks = ingest_pdfs(
                user=user, docs=options["docs"], names=[item.file for item in items]
            )
            figures = evaluate_places(
                user=user,
                notebooks=notebooks,
                items=items,
                answers=options["answers"],
                # Each answer's row on stderr as it comes: stdout keeps the one summary.
                on_row=lambda row: self.stderr.write(json.dumps(row, ensure_ascii=False)),
            )
        except EvaluationError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            for notebook in notebooks.values():
                notebook.delete()
        if options["json"]:
            self.stdout.write(json.dumps(figures, ensure_ascii=False))
            return
        self._write_rows(figures["kinds"], place="place")
        self._write_answers(figures.get("answers", []), cited="cited_places")

    def _handle_pages(self, user: Any, options: dict[str, Any]) -> None:
        notebooks = {}
        try:
            items = load_page_items(options["pages"])
            if options["limit"]:
                items = items[: options["limit"]]
            offtopic = load_offtopic(options["offtopic"]) if options["offtopic"] else []
            notebooks = ingest_pdfs(
                user=user,
                docs=options["docs"],
                names=[item.doc for item in items] + [item.doc for item in offtopic],
            )
            figures = evaluate_pages(
                user=user,
                notebooks=notebooks,
                items=items,
                offtopic=offtopic,
                answers=options["answers"],
                # Each answer's row on stderr as it comes: stdout keeps the one summary.
                on_row=lambda row: self.stderr.write(json.dumps(row, ensure_ascii=False)),
            )
        except EvaluationError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            # The documents stay in the user's library, so the next run links them.
            for notebook in notebooks.values():
                notebook.delete()
        if options["json"]:
            self.stdout.write(json.dumps(figures, ensure_ascii=False))
            return
        self._write_rows(figures["questions"], place="gold page")
        self._write_answers(figures.get("answers", []), cited="cited_pages")
        for lang, row in figures.get("offtopic", {}).items():
            self.stdout.write(
                f"{lang} off-topic: {row['refused']}/{row['questions']} refused (nothing cited)"
            )
            for cited in row["cited"]:
                self.stdout.write(f"  {cited['question']} cited pages {cited['pages']}")

    def _write_answers(self, answers: list[dict[str, Any]], *, cited: str) -> None:
        for answer in answers:
            verdict = "gold cited" if answer["gold_cited"] else "missed"
            gold = json.dumps(answer["gold"], ensure_ascii=False)
            self.stdout.write(
                f"{answer['id']} [{answer['mode']}, {answer['seconds']} s] gold {gold} "
                f"cited {answer[cited]} ({verdict}; {answer['supported_sentences']}/"
                f"{answer['sentences']} sentences verified)\n"
                f"  Q: {answer['question']}\n  A: {answer['answer']}"
            )

    def _write_rows(self, rows: dict[str, dict[str, Any]], *, place: str) -> None:
        """A line of figures per kind (--places) or language (--pages), then the questions
        whose place (a slide, sheet or section; a page) was missed."""
        for name, row in rows.items():
            total = row["questions"]
            retrieved = ", ".join(
                f"@{figure.split('@')[1]} {count}/{total}"
                for figure, count in row.items()
                if figure.startswith("retrieved@")
            )
            if "place_right" in row:
                found = (
                    f"quote found {row['quote_found']}/{total}, at its place "
                    f"{row['place_right']}/{total}"
                )
            else:
                found = f"quote found on its page {row['quote_found']}/{total}"
            self.stdout.write(
                f"{name}: {total} questions; {place} retrieved {retrieved}; cited "
                f"{row['cited']}/{total}; refused {row['refused']}; {found}"
            )
            for missed in row["missed"]:
                if "where" in missed:
                    gold = f"where {json.dumps(missed['where'], ensure_ascii=False)}"
                else:
                    gold = f"gold {missed['gold']}, cited {missed['cited']}"
                self.stdout.write(f"  {missed['id']}: {gold}, retrieved {missed['retrieved']}")
            if "sentences" in row:
                self.stdout.write(
                    f"  sentences with a verified citation {row['supported_sentences']}/"
                    f"{row['sentences']}; only markers {row['marker_only']}; seconds p50 "
                    f"{row['seconds_p50']}, max {row['seconds_max']}"
                )
