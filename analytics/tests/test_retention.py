"""The question log is personal data: rows older than QUESTION_LOG_DAYS are deleted by a
daily job, and one person's log can be deleted (their conversations stay)."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from analytics.models import QuestionLog
from analytics.tasks import delete_expired_question_logs
from generation.answering import answer_question
from notebooks.models import Message, Notebook


def _row(notebook, user, days_ago=0):
    row = QuestionLog.objects.create(
        notebook=notebook, user=user, question="Q?", mode="llm", refused=False, total_ms=5
    )
    QuestionLog.objects.filter(pk=row.pk).update(
        created_at=timezone.now() - timedelta(days=days_ago)
    )
    return row


def test_rows_past_the_retention_are_deleted_by_the_daily_job(settings, owner, notebook):
    settings.QUESTION_LOG_DAYS = 30
    kept, _old = _row(notebook, owner, days_ago=29), _row(notebook, owner, days_ago=31)

    delete_expired_question_logs(timestamp=0)

    assert list(QuestionLog.objects.all()) == [kept]


def test_one_persons_log_is_deleted_and_their_conversations_stay(owner, outsider, notebook):
    answer_question(user=owner, notebook=notebook, question="Anything?")
    theirs = Notebook.objects.create(owner=outsider, title="Theirs")
    other = _row(theirs, outsider)
    out = StringIO()

    call_command("question_log", "forget-user", "owner", stdout=out)

    assert out.getvalue() == "Deleted 1 question(s) of owner.\n"
    assert list(QuestionLog.objects.all()) == [other]
    assert Message.objects.filter(content="Anything?").exists()
    with pytest.raises(CommandError, match="no user 'nobody'"):
        call_command("question_log", "forget-user", "nobody")


def test_the_report_command_prints_a_notebooks_figures(owner, notebook):
    answer_question(user=owner, notebook=notebook, question="Anything?")
    out = StringIO()

    call_command(
        "question_log", "report", "--user", "owner", "--notebook", "Research", "--json", stdout=out
    )

    import json

    report = json.loads(out.getvalue())
    assert report["asked"] == 1 and report["refused"] == 1
    assert report["unanswered"] == [{"question": "Anything?", "times": 1}]
