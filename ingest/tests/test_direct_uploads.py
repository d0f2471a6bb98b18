"""Uploads straight into S3 (ingest/direct_uploads.py), against moto's S3 server on
127.0.0.1 (a real HTTP server speaking S3, not a mock of boto3): reserve, PUT to the signed
URL as a browser would, confirm; what arrived wrong is refused and deleted, someone else's
reservation is a 404, an abandoned one is cleaned up, and without S3 there is none."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import boto3
import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone
from moto.server import ThreadedMotoServer

from ingest.direct_uploads import delete_abandoned_uploads
from ingest.models import UploadReservation
from ingest.tests.data import PDFS
from library.models import Source
from ops.tests.stack import free_port

PDF = (PDFS / "sample-files/pdflatex-4-pages.pdf").read_bytes()
BUCKET = "loupe-media"


@pytest.fixture
def s3(settings):
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    # moto keeps its buckets in the process, across servers: each test starts empty.
    httpx2.post(f"{endpoint}/moto-api/reset")
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    client.create_bucket(Bucket=BUCKET)
    settings.S3_BUCKET = BUCKET
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": BUCKET,
                "endpoint_url": endpoint,
                "region_name": "us-east-1",
                "location": "media",
                "access_key": "test",
                "secret_key": "test",
                "default_acl": None,
                "file_overwrite": False,
                "signature_version": "s3v4",
            },
        },
    }
    yield client
    server.stop()


def keys(client) -> list[str]:
    return [item["Key"] for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def reserve(client, notebook, *, data=PDF, name="manual.pdf", kind="application/pdf", **extra):
    fields = {
        "filename": name,
        "size": len(data),
        "content_type": kind,
        "sha256": hashlib.sha256(data).hexdigest(),
        **extra,
    }
    return client.post(reverse("uploads:reserve", args=[notebook.pk]), fields)


def put(reserved, body: bytes):
    """The browser's PUT: straight to the bucket, with the signed headers."""
    response = httpx2.put(reserved["url"], content=body, headers=reserved["headers"])
    return response.status_code


def test_a_file_put_straight_into_the_bucket_becomes_a_queued_source(s3, client, owner, notebook):
    client.force_login(owner)

    reserved = reserve(client, notebook).json()
    assert put(reserved, PDF) == 200
    confirmed = client.post(reserved["confirm_url"])

    assert confirmed.status_code == 201, confirmed.content
    source = Source.objects.get(pk=confirmed.json()["source"])
    assert (source.kind, source.status, source.size_bytes) == ("pdf", "queued", len(PDF))
    assert source.sha256 == hashlib.sha256(PDF).hexdigest()
    assert list(notebook.sources.all()) == [source]
    # The object stays where the browser put it: the source's file, not copied.
    assert keys(s3) == [f"media/{source.file.name}"]
    with source.file.open("rb") as stored:
        assert stored.read() == PDF
    assert not UploadReservation.objects.exists()


def test_the_same_bytes_again_link_the_existing_source_and_drop_the_copy(
    s3, client, owner, notebook
):
    client.force_login(owner)
    first = reserve(client, notebook).json()
    put(first, PDF)
    client.post(first["confirm_url"])

    second = reserve(client, notebook, name="again.pdf").json()
    put(second, PDF)
    confirmed = client.post(second["confirm_url"])

    assert confirmed.status_code == 200 and confirmed.json()["created"] is False
    assert Source.objects.count() == 1 and len(keys(s3)) == 1


def test_a_file_of_another_size_is_refused_and_deleted(s3, client, owner, notebook):
    client.force_login(owner)
    reserved = reserve(client, notebook, data=PDF[:100] + b"x" * (len(PDF) - 100)).json()
    # The signed Content-Length is the announced size; a server that does not enforce it
    # (or a client that lies) is caught at the confirm.
    status = put(reserved, PDF[: len(PDF) // 2])
    confirmed = client.post(reserved["confirm_url"])

    if status == 200:
        assert confirmed.status_code == 400
        assert "not the" in confirmed.json()["error"] and "announced" in confirmed.json()["error"]
    assert not Source.objects.exists() and keys(s3) == []


def test_bytes_other_than_announced_are_refused(s3, client, owner, notebook):
    client.force_login(owner)
    other = PDF[:-10] + b"0123456789"
    reserved = reserve(client, notebook).json()  # announced: the PDF's SHA-256
    assert put(reserved, other) == 200

    confirmed = client.post(reserved["confirm_url"])

    assert confirmed.status_code == 400 and "SHA-256 differs" in confirmed.json()["error"]
    assert not Source.objects.exists() and keys(s3) == []
    assert not UploadReservation.objects.exists()


def test_a_file_loupe_cannot_read_is_refused_after_it_arrived(s3, client, owner, notebook):
    client.force_login(owner)
    program = b"MZ\x90\x00" + bytes(range(256)) * 4
    reserved = reserve(
        client, notebook, data=program, name="setup.exe", kind="application/octet-stream"
    ).json()
    put(reserved, program)

    confirmed = client.post(reserved["confirm_url"])

    assert confirmed.status_code == 400 and "not a file Loupe can read" in confirmed.json()["error"]
    assert keys(s3) == []


def test_another_type_than_announced_is_refused(s3, client, owner, notebook):
    client.force_login(owner)
    reserved = reserve(client, notebook).json()
    # Sent as text/plain against a signature for application/pdf: S3 refuses the PUT; a
    # server that let it through is caught at the confirm.
    status = httpx2.put(reserved["url"], content=PDF, headers={"Content-Type": "text/plain"})

    confirmed = client.post(reserved["confirm_url"])

    assert confirmed.status_code == 400
    assert not Source.objects.exists()
    if status.status_code == 200:
        assert "not the application/pdf announced" in confirmed.json()["error"]
        assert keys(s3) == []


def test_a_confirm_before_the_file_arrived_says_so_and_keeps_the_reservation(
    s3, client, owner, notebook
):
    client.force_login(owner)
    reserved = reserve(client, notebook).json()

    confirmed = client.post(reserved["confirm_url"])

    assert confirmed.status_code == 400 and "has not arrived" in confirmed.json()["error"]
    assert UploadReservation.objects.count() == 1


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"size": 0}, "is empty"),
        ({"size": 10**12}, "larger than"),
        ({"sha256": "abc"}, "not 64 hex digits"),
        ({"filename": "/"}, "no name"),
        ({"pdf_capture": "magic"}, "Unknown PDF capture mode"),
    ],
)
def test_bad_reservations_are_refused(s3, client, owner, notebook, fields, says):
    client.force_login(owner)

    response = reserve(client, notebook, **fields)

    assert response.status_code == 400 and says in response.json()["error"]
    assert not UploadReservation.objects.exists()


def test_someone_elses_reservation_is_404(s3, client, owner, notebook):
    client.force_login(owner)
    reserved = reserve(client, notebook).json()
    put(reserved, PDF)
    editor = get_user_model().objects.create_user(username="editor", password="pw-12345")
    from sharing.models import Membership

    Membership.objects.create(notebook=notebook, user=editor, role="editor")
    client.force_login(editor)

    assert client.post(reserved["confirm_url"]).status_code == 404
    assert UploadReservation.objects.count() == 1 and not Source.objects.exists()


def test_an_unconfirmed_upload_is_deleted_with_its_object_once_expired(
    s3, settings, client, owner, notebook
):
    client.force_login(owner)
    reserved = reserve(client, notebook).json()
    put(reserved, PDF)
    fresh = reserve(client, notebook, name="fresh.pdf").json()
    UploadReservation.objects.filter(pk=reserved["id"]).update(
        created_at=timezone.now() - timedelta(seconds=settings.S3_URL_EXPIRE_SECONDS + 3601)
    )

    assert delete_abandoned_uploads() == 1

    assert list(UploadReservation.objects.values_list("pk", flat=True)) == [fresh["id"]]
    assert keys(s3) == []


def test_without_s3_there_is_no_direct_upload(client, owner, notebook):
    client.force_login(owner)

    response = reserve(client, notebook)

    assert response.status_code == 404
    page = client.get(reverse("notebooks:detail", args=[notebook.pk])).content.decode()
    assert "data-direct-url" not in page
