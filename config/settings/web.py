"""The web site: hosts and HTTPS, the apps and their middleware, templates, sign-in, the
interface languages, static files and the Content-Security-Policy."""

from __future__ import annotations

from pathlib import Path

from config.env import env_bool, env_int, env_list, env_str
from config.settings.base import BASE_DIR, DATA_DIR, DEBUG, PRODUCTION
from config.settings.storage import S3_ORIGINS

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
# Off production, static files are served from the source folders as well, so `manage.py
# serve` without DEBUG (and without collectstatic) still has its styles and scripts.
WHITENOISE_USE_FINDERS = DEBUG or not PRODUCTION
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
