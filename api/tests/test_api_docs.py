"""docs/api.md's examples, run as written against Loupe served by uvicorn: every `sh` block
(curl) and every `python` block (the standard library, the `openai` client, the `mcp` SDK)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from api.tests.live import ROOT
from api.tokens import create_token

DOCS = ROOT / "docs" / "api.md"
BLOCK = re.compile(r"^```(sh|python)\n(.*?)^```", re.MULTILINE | re.DOTALL)
REPLY = "Grey herons wait motionless at the edge of the pond [1]."
EXAMPLES = [(kind, code) for kind, code in BLOCK.findall(DOCS.read_text())]


def test_the_docs_have_examples_of_each_kind():
    kinds = [kind for kind, _ in EXAMPLES]
    assert kinds.count("sh") >= 4 and kinds.count("python") >= 3
    assert any("mcp" in code for _, code in EXAMPLES)
    assert any("openai" in code for _, code in EXAMPLES)


def _json_values(output: str) -> list:
    """The JSON values curl printed one after another (responses end without a newline);
    server-sent events are read from their data lines."""
    if "event: " in output:
        return [json.loads(line[6:]) for line in output.splitlines() if line.startswith("data: ")]
    decoder, values, at = json.JSONDecoder(), [], 0
    while at < len(output):
        if output[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(output, at)
        values.append(value)
    assert values
    return values


def _is_error(value) -> bool:
    if not isinstance(value, dict):
        return False
    return {"code", "message"} <= set(value) or isinstance(value.get("error"), dict)


@pytest.mark.parametrize(
    ("kind", "code"), EXAMPLES, ids=[f"{kind}-{n}" for n, (kind, _) in enumerate(EXAMPLES)]
)
def test_an_example_runs(kind, code, live, owner, notebook, live_library, tmp_path):
    url, models = live
    models.chat_reply_for = lambda body: REPLY
    env = {
        **os.environ,
        "LOUPE_URL": url,
        "LOUPE_TOKEN": create_token(user=owner, name="docs", scope="write").secret,
        "NOTEBOOK": str(notebook.pk),
    }
    command = (
        ["bash", "-euo", "pipefail", "-c", code] if kind == "sh" else [sys.executable, "-c", code]
    )
    try:
        done = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
    finally:
        models.chat_reply_for = None

    assert done.returncode == 0, done.stderr
    output = done.stdout
    assert output.strip(), f"{code}\nprinted nothing"
    if kind == "sh":
        for parsed in _json_values(output):
            assert not _is_error(parsed), parsed
    if "ask" in code or "chat.completions" in code:
        assert "herons" in output.lower()
