"""`manage.py ingest` takes web addresses among its paths."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from library.models import Source

pytestmark = pytest.mark.django_db(transaction=True)


def ingest(*paths: str, out: StringIO) -> list[dict]:
    call_command("ingest", *paths, "--user", "u", "--notebook", "N", "--json", stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_ingest_fetches_a_url_and_names_the_source_by_the_page_title(
    fake_openai, loopback_allowed, web
):
    [result] = ingest(f"{web.base}/page.html", out=StringIO())

    source = Source.objects.get(pk=result["source_id"])
    assert result["name"] == f"{web.base}/page.html"
    assert (result["kind"], result["status"], result["error"]) == ("url", "ready", "")
    assert result["chunks"] == source.chunk_count > 0
    assert source.title == "Herons of the Pond"


def test_ingest_reports_a_refused_url_and_exits_1(fake_openai, web, settings):
    settings.URL_ALLOW_LOOPBACK = False
    out = StringIO()

    with pytest.raises(SystemExit) as exit_:
        ingest(f"{web.base}/page.html", "ftp://pages.example/notes.txt", out=out)

    assert exit_.value.code == 1
    local, ftp = (json.loads(line) for line in out.getvalue().splitlines())
    assert (local["kind"], local["status"]) == ("url", "failed")
    assert "Loupe does not fetch 127.0.0.1" in local["error"]
    assert (ftp["source_id"], ftp["status"]) == (None, "failed")
    assert "only http:// and https://" in ftp["error"]
    assert web.seen == []
