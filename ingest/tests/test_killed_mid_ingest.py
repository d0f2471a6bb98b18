"""A process killed mid-ingest leaves nothing half-written, and the source recovers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.base import ContentFile

from ingest.services import add_source, process_source
from library.models import Chunk, Source
from ops.tests.stack import database_url

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_while_embedding_leaves_whole_chunks_searchable_by_words_then_resumes(
    notebook, fake_openai
):
    words = " ".join(f"word{i}" for i in range(2000))
    added = add_source(
        owner=notebook.owner, notebook=notebook, upload=ContentFile(words.encode(), name="a.txt")
    )
    # The first embedding request succeeds, the second hangs until the process is killed.
    fake_openai.slow_seconds = 60
    fake_openai.fail_next("slow", endpoint="embeddings", skip=1)
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "OPENAI_BASE_URL": settings.OPENAI_BASE_URL,
        "OPENAI_API_KEY": "test",
        "CHAT_MODEL": "fake-chat",
        "EMBEDDING_MODEL": "fake-embed",
        "EMBEDDING_BATCH_SIZE": "2",
        "INGEST_EMBED_CHUNKS": "2",
        # One request at a time, so that the second one sent is the second batch's.
        "EMBEDDING_CONCURRENT_REQUESTS": "1",
        "OPENAI_TIMEOUT_SECONDS": "120",
        "OPENAI_MAX_RETRIES": "0",
        "MEDIA_ROOT_OVERRIDE": str(settings.MEDIA_ROOT),
    }
    code = (
        "from django.conf import settings; import os;"
        "settings.MEDIA_ROOT = os.environ['MEDIA_ROOT_OVERRIDE'];"
        "from ingest.services import process_source;"
        f"process_source(source_id={added.source.pk})"
    )
    child = subprocess.Popen([sys.executable, "manage.py", "shell", "-c", code], cwd=REPO, env=env)
    try:
        deadline = time.monotonic() + 60
        while Source.objects.get(pk=added.source.pk).progress_done < 2:
            assert child.poll() is None, "the ingest process ended before it was killed"
            assert time.monotonic() < deadline, "the ingest process never started embedding"
            time.sleep(0.1)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()

    # Read and written whole, two chunks embedded: ready, searched by its words meanwhile.
    source = Source.objects.get(pk=added.source.pk)
    assert (source.status, source.stage) == (Source.Status.READY, Source.Stage.EMBEDDING)
    chunks = Chunk.objects.filter(source=source)
    assert chunks.count() == source.chunk_count > 2
    assert chunks.filter(embedding__isnull=False).count() == 2
    assert not source.is_finished
    ids = set(chunks.values_list("id", flat=True))

    # A retried job (the stalled-job recovery re-queues it) embeds the rest, chunks kept.
    source = process_source(source_id=source.pk)
    assert (source.status, source.stage) == (Source.Status.READY, "")
    assert set(Chunk.objects.filter(source=source).values_list("id", flat=True)) == ids
    assert not Chunk.objects.filter(source=source, embedding__isnull=True).exists()
