"""Where Loupe keeps what it stores: the database (embedded, or DATABASE_URL) and its pool,
uploaded and generated files (the data folder, or an S3-compatible bucket), and how large an
upload or a request may be."""

from __future__ import annotations

import sys
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from config.database import database_settings
from config.env import env_float, env_int, env_str
from config.settings.base import DATA_DIR

DATABASES = {
    "default": database_settings(
        env_str("DATABASE_URL"), DATA_DIR, env_str("DATABASE_SHARED_BUFFERS")
    )
}
# Only the statements that ask to be prepared are: the search's (retrieval/search.py), which
# run on a plan made once per connection. Django's own queries bind on the client and never
# are. (Django leaves preparing off for poolers such as PgBouncer in transaction mode, which
# carry prepared statements only with max_prepared_statements set, PgBouncer 1.21 or later.)
DATABASES["default"]["OPTIONS"]["prepare_threshold"] = sys.maxsize
# Connections per process kept open in a pool (psycopg_pool, Django's "pool" option): a new
# PostgreSQL connection costs ~5 ms and its first queries run on cold caches, on every
# request (bench/README.md, streaming overhead). 0: a new connection per request.
DATABASE_POOL_SIZE = env_int("DATABASE_POOL_SIZE", 20, minimum=0)
# A request waits this long for a connection, then gets the "database not reachable" page
# (HTTP 503, ops/outage.py): while the database is down every query would wait this long.
DATABASE_POOL_TIMEOUT = env_float("DATABASE_POOL_TIMEOUT", 4.0)
if DATABASE_POOL_TIMEOUT <= 0:
    raise ImproperlyConfigured("DATABASE_POOL_TIMEOUT must be more than 0")
if DATABASE_POOL_SIZE:
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "min_size": 1,
        "max_size": DATABASE_POOL_SIZE,
        "timeout": DATABASE_POOL_TIMEOUT,
        # The pool reconnects a lost connection in the background, each pause twice the
        # last, for this long: after a 70 s outage its next try could come a minute after
        # the server is back, while every request times out. Past it, the pool gives up on
        # that connection and the next request that needs one tries at once.
        "reconnect_timeout": 8.0,
    }
# A job that starts while the database is away waits this long for it before it is retried
# later (ops/database.py); a job's lost database counts as transient, like a model server's.
DATABASE_WAIT_SECONDS = env_float("DATABASE_WAIT_SECONDS", 120.0)
if DATABASE_WAIT_SECONDS < 0:
    raise ImproperlyConfigured("DATABASE_WAIT_SECONDS must be 0 or more")
# A connection the server dropped (PostgreSQL restarted) is replaced when taken from the
# pool, or before reuse without one, instead of failing the request it was handed to.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
MEDIA_ROOT = DATA_DIR / "uploads"
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Uploaded and generated files in an S3-compatible bucket (AWS S3, MinIO, Garage, R2 …)
# instead of MEDIA_ROOT, so web and workers on several machines share them. Credentials come
# from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (boto3 reads them from the environment).
S3_BUCKET = env_str("S3_BUCKET")
S3_URL_EXPIRE_SECONDS = env_int("S3_URL_EXPIRE_SECONDS", 3600, minimum=60)
if S3_BUCKET:
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": S3_BUCKET,
            "endpoint_url": env_str("S3_ENDPOINT_URL") or None,
            "region_name": env_str("S3_REGION") or None,
            "location": env_str("S3_PREFIX"),
            # Files are private: links are signed and expire.
            "default_acl": None,
            "querystring_auth": True,
            "querystring_expire": S3_URL_EXPIRE_SECONDS,
            "file_overwrite": False,
            # SigV4 (every region takes it): a direct upload's signed PUT covers its
            # Content-Type and Content-Length headers (ingest/direct_uploads.py).
            "signature_version": "s3v4",
        },
    }

# Where the browser puts a direct upload (ingest/direct_uploads.py): the endpoint's origin,
# else AWS's; the page's Content-Security-Policy allows it.
S3_ORIGINS: list[str] = []
if S3_BUCKET:
    _endpoint = urlsplit(env_str("S3_ENDPOINT_URL"))
    S3_ORIGINS = (
        [f"{_endpoint.scheme}://{_endpoint.netloc}"]
        if _endpoint.netloc
        else ["https://*.amazonaws.com"]
    )

# Uploads: the whole file is read to hash it, so cap it.
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 100 * 1024 * 1024, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# One request's body: an upload of up to UPLOAD_MAX_BYTES and its form. Larger bodies are
# refused with 413 before they are read (limits/middleware.py).
REQUEST_MAX_BYTES = env_int("REQUEST_MAX_BYTES", UPLOAD_MAX_BYTES + 1024 * 1024, minimum=1)
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
