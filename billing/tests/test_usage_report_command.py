import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from billing.models import Usage
from billing.services import record_usage


@pytest.fixture
def priced(settings):
    settings.MODEL_PRICES = {
        **settings.MODEL_PRICES,
        "chat-model": {"input_per_million": "1", "output_per_million": "2"},
    }


def test_usage_report_prints_rows_and_the_total(owner, outsider, priced, capsys):
    record_usage(user=owner, kind="chat", model="chat-model", input_tokens=1000, output_tokens=500)
    record_usage(user=outsider, kind="chat", model="chat-model", input_tokens=1000)

    call_command("usage_report")

    out = capsys.readouterr().out
    assert "owner" in out and "outsider" in out
    assert "Total: 2 calls, cost 0.003000" in out


def test_usage_report_json_for_one_user_since_a_day(owner, outsider, priced, capsys):
    old = record_usage(user=owner, kind="chat", model="chat-model", input_tokens=1000)
    Usage.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=10))
    record_usage(user=owner, kind="chat", model="chat-model", input_tokens=1000, output_tokens=500)
    record_usage(user=outsider, kind="chat", model="chat-model", input_tokens=1000)
    since = (timezone.now() - timedelta(days=1)).date().isoformat()

    call_command("usage_report", user="owner", since=since, json=True)

    report = json.loads(capsys.readouterr().out)
    assert report["calls"] == 1
    assert Decimal(report["cost"]) == Decimal("0.002")
    [row] = report["rows"]
    assert (row["user"], row["kind"], row["model"]) == ("owner", "chat", "chat-model")
    assert (row["input_tokens"], row["output_tokens"]) == (1000, 500)


def test_usage_report_refuses_a_day_it_cannot_read(db):
    with pytest.raises(CommandError, match="YYYY-MM-DD"):
        call_command("usage_report", since="last week")
