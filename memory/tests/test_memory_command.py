"""`manage.py memory`: the same facts as the chat's commands, for a named user's notebook."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory.models import Memory


def run(*args: str) -> str:
    out = StringIO()
    call_command("memory", *args, "--user", "owner", "--notebook", "Research", stdout=out)
    return out.getvalue()


def test_add_list_forget_and_clear(owner, notebook):
    assert run("add", "I teach year 9 biology.") == "Remembered: I teach year 9 biology.\n"
    run("add", "Be brief.", "--everywhere")

    assert (
        run("list") == "1. I teach year 9 biology. (this notebook)\n2. Be brief. (all notebooks)\n"
    )
    assert json.loads(run("list", "--json"))[1] == {
        "number": 2,
        "text": "Be brief.",
        "everywhere": True,
    }
    assert run("forget", "1") == "Forgotten: I teach year 9 biology.\n"
    # Only this notebook's facts, unless all are asked for.
    assert run("clear") == "Forgot 0 remembered fact(s).\n"
    assert run("clear", "--everywhere") == "Forgot 1 remembered fact(s).\n"
    assert not Memory.objects.exists()


def test_bad_input_fails_saying_why(owner, notebook, outsider):
    with pytest.raises(CommandError, match="Write the fact to remember"):
        run("add")
    with pytest.raises(CommandError, match="Name the fact to forget"):
        run("forget")
    with pytest.raises(CommandError, match="no notebook"):
        call_command("memory", "list", "--user", "outsider", "--notebook", "Research")
