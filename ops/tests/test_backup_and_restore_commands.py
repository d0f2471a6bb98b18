"""`manage.py backup` and `manage.py restore`, end to end on a data folder of their own, as
the README's `make run` keeps one: a PDF read and asked about, backed up while its database
runs, the folder wiped (server stopped, files deleted), restored. The same notebooks,
answers, citations, stored files, secret key and page images come back; a restore over a
site with data is refused unless --force."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile

import pytest

from ingest.tests.data import PDFS
from ops.backup import BackupError, restore
from ops.tests.outage import embedded_only
from ops.tests.stack import REPO, fake_models

FOUR_PAGES = PDFS / "sample-files/pdflatex-4-pages.pdf"

# Everything a person sees of their notebooks, and the picture of every cited page.
SITE = """
import hashlib, json
from library.files import local_copy
from library.models import Source
from notebooks.models import Citation, Message, Notebook
from ingest.page_images import render_page_png

def png(citation):
    source = citation.chunk.source
    with local_copy(source.file) as path:
        data = render_page_png(path, citation.chunk.page, quote=citation.quote)
    return hashlib.sha256(data).hexdigest()

print(json.dumps({
    "notebooks": [[n.owner.username, n.title, sorted(s.pk for s in n.sources.all())]
                  for n in Notebook.objects.order_by("pk")],
    "sources": [[s.title, s.kind, s.status, s.sha256, s.chunk_count, s.page_count,
                 hashlib.sha256(s.file.read()).hexdigest()]
                for s in Source.objects.order_by("pk")],
    "messages": [[m.role, m.content] for m in Message.objects.order_by("pk")],
    "citations": [[c.n, c.chunk_id, c.quote, c.chunk.page, png(c)]
                  for c in Citation.objects.select_related("chunk__source").order_by("pk")],
}))
"""


def site(env: dict[str, str]) -> dict:
    # The shell's last line: it may say first what it imported.
    return json.loads(manage("shell", "-c", SITE, env=env).stdout.splitlines()[-1])


def manage(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


@embedded_only
def test_a_site_backed_up_wiped_and_restored_is_the_same_site(fake_openai, tmp_path):
    data = tmp_path / "var"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "LOUPE_DATA_DIR": str(data),
        **fake_models(fake_openai),
    }
    backup = tmp_path / "site.tar.gz"
    try:
        manage("migrate", "--noinput", env=env)
        manage("ingest", str(FOUR_PAGES), "--user", "u", "--notebook", "Papers", env=env)
        fake_openai.chat_replies.append("It is a sample document in four pages [1].")
        asked = json.loads(
            manage(
                "ask", "--user", "u", "--notebook", "Papers", "--json", "What is it about?", env=env
            ).stdout  # fmt: skip
        )
        assert asked["citations"], asked
        before = site(env)
        key = (data / "secret_key").read_text()

        made = manage("backup", "--to", str(backup), env=env)
        assert f"to {backup}" in made.stdout
        assert backup.stat().st_mode & 0o777 == 0o600

        # A site with data is not overwritten by mistake.
        refused = manage("restore", str(backup), env=env, check=False)
        assert refused.returncode != 0
        assert "already holds data" in refused.stderr and "--force" in refused.stderr

        # Wiped: the server stopped and the data folder deleted, as after a lost disk.
        subprocess.run(
            [sys.executable, "-m", "config.database", "stop"], cwd=REPO, env=env, check=True
        )
        shutil.rmtree(data)

        restored = manage("restore", str(backup), env=env)
        assert "1 stored files and secret_key" in restored.stdout
        after = site(env)
        assert after == before
        assert (data / "secret_key").read_text() == key
        assert manage("migrate", "--check", env=env, check=False).returncode == 0

        # --force replaces a site that holds data.
        manage("restore", str(backup), "--force", env=env)
        assert site(env) == before
    finally:
        if data.exists():
            subprocess.run(
                [sys.executable, "-m", "config.database", "stop"], cwd=REPO, env=env, check=False
            )


@pytest.mark.django_db
def test_a_file_that_is_no_backup_is_refused(tmp_path):
    other = tmp_path / "other.tar.gz"
    with tarfile.open(other, "w:gz") as archive:
        archive.add(FOUR_PAGES, arcname="paper.pdf")

    with pytest.raises(BackupError, match="no Loupe backup"):
        restore(archive_path=other)
