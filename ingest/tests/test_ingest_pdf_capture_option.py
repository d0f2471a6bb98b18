import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from ingest.tests.data import PDFS
from library.models import Preferences, Source

pytestmark = pytest.mark.django_db(transaction=True)

SCAN = str(PDFS / "sample-files/cmyk-image.pdf")


def test_ingest_reads_new_pdfs_in_the_capture_mode_it_is_given(fake_openai):
    out = StringIO()
    with pytest.raises(SystemExit):
        call_command(
            "ingest",
            SCAN,
            "--user",
            "u",
            "--notebook",
            "N",
            "--pdf-capture",
            "text",
            "--json",
            stdout=out,
            stderr=StringIO(),
        )

    [result] = [json.loads(line) for line in out.getvalue().splitlines()]
    assert result["status"] == "failed"
    assert "capture mode 'text'" in result["error"]
    assert Source.objects.get().pdf_capture == "text"


def test_ingest_refuses_an_unknown_capture_mode():
    with pytest.raises(CommandError, match="invalid choice: 'ocr'"):
        call_command(
            "ingest",
            SCAN,
            "--user",
            "u",
            "--notebook",
            "N",
            "--pdf-capture",
            "ocr",
            stdout=StringIO(),
            stderr=StringIO(),
        )


def test_ingest_without_a_capture_mode_uses_the_users_default(fake_openai):
    user = get_user_model().objects.create_user(username="u")
    Preferences.objects.create(user=user, pdf_capture="text")
    out = StringIO()
    with pytest.raises(SystemExit):
        call_command(
            "ingest",
            SCAN,
            "--user",
            "u",
            "--notebook",
            "N",
            "--json",
            stdout=out,
            stderr=StringIO(),
        )

    [result] = [json.loads(line) for line in out.getvalue().splitlines()]
    assert "capture mode 'text'" in result["error"]
    assert Source.objects.get().pdf_capture == "text"
