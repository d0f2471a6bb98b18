"""With S3_BUCKET, uploads live in an S3-compatible bucket (here moto's S3 server on
127.0.0.1) and a worker on another machine can still read them: loaders get a temporary
local copy (library/files.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import InMemoryStorage
from django.db.models.fields.files import FieldFile
from moto.server import ThreadedMotoServer

from ingest.tests.data import PDFS
from library.files import local_copy
from library.models import Source
from ops.tests.stack import REPO, database_url, fake_models, free_port, production_env

FOUR_PAGES = PDFS / "sample-files/pdflatex-4-pages.pdf"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}


@pytest.fixture
def s3():
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    client.create_bucket(Bucket="loupe-media")
    yield endpoint, client
    server.stop()


# The upload and its processing run in processes configured only by the environment, as a
# web and a worker container would be; the test checks the bucket and the database.
ADD_AND_PROCESS = """
import json, sys
from django.core.files import File
from django.core.files.storage import default_storage
from ingest.services import add_source, process_source
from notebooks.models import Notebook
notebook = Notebook.objects.get(pk={notebook_id})
with open({path!r}, "rb") as handle:
    added = add_source(owner=notebook.owner, notebook=notebook, upload=File(handle))
source = process_source(source_id=added.source.pk)
print(json.dumps({{"storage": type(default_storage._wrapped).__name__, "name": source.file.name,
                  "status": source.status, "error": source.error, "pages": source.page_count}}))
"""


@pytest.mark.django_db(transaction=True)
def test_a_pdf_stored_in_s3_is_processed_from_a_temporary_copy(s3, fake_openai, notebook, tmp_path):
    endpoint, client = s3
    env = production_env(
        tmp_path,
        DATABASE_URL=database_url(),
        S3_BUCKET="loupe-media",
        S3_ENDPOINT_URL=endpoint,
        S3_REGION="us-east-1",
        S3_PREFIX="media",
        **CREDENTIALS,
        **fake_models(fake_openai),
    )
    code = ADD_AND_PROCESS.format(notebook_id=notebook.pk, path=str(FOUR_PAGES))

    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["storage"] == "S3Storage"
    assert report["status"] == "ready", report["error"]
    assert report["pages"] == 4
    keys = [item["Key"] for item in client.list_objects_v2(Bucket="loupe-media")["Contents"]]
    assert keys == [f"media/{report['name']}"]
    assert not (tmp_path / "uploads").exists()  # nothing went to the local media folder
    source = Source.objects.get(file=report["name"])
    assert source.chunks.filter(page=4).exists()


def test_a_storage_without_paths_yields_a_copy_that_is_removed_afterwards():
    storage = InMemoryStorage()
    name = storage.save("sources/notes.txt", ContentFile(b"in memory"))
    stored = FieldFile(instance=Source(), field=Source._meta.get_field("file"), name=name)
    stored.storage = storage

    with local_copy(stored) as path:
        assert path.read_bytes() == b"in memory"
        assert path.name == "notes.txt"
        copy = Path(path)
    assert not copy.exists()


@pytest.mark.django_db
def test_the_filesystem_storage_is_read_in_place(fake_openai, notebook, add_ready_source):
    source = add_ready_source(notebook, b"Read where it lies. " * 10)

    with local_copy(source.file) as path:
        assert path == Path(source.file.path)
    assert path.exists()
