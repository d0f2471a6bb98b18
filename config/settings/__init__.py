"""Loupe's settings: every value from an environment variable, with a laptop default.

One settings module for Django (DJANGO_SETTINGS_MODULE=config.settings), gathered from its
parts, one concern each; a new setting goes in the part it belongs to, read with a typed
helper (config/env.py), shown in .env.example and described in docs/configuration.md.

base.py        the data folder, production or a laptop, the secret key
storage.py     the database and its pool, stored files (folder or S3), upload sizes
web.py         hosts and HTTPS, apps, middleware, templates, languages, static files, CSP
providers.py   the models called: an OpenAI-compatible endpoint or the local defaults
reading.py     reading sources: PDFs, images, recordings, web pages; summaries, chunks
answering.py   the search and its ranking, answers' history, generated documents
operations.py  rate limits, billing, background jobs, /healthz, retention, logs
"""

# Each part's settings become this module's: Django reads only this module's upper-case
# names. A part imports what it builds on from the part that reads it (web's policy names
# storage's S3 origin), so the order of these lines does not matter.
from config.settings.answering import *  # noqa: F403
from config.settings.base import *  # noqa: F403
from config.settings.operations import *  # noqa: F403
from config.settings.providers import *  # noqa: F403
from config.settings.reading import *  # noqa: F403
from config.settings.storage import *  # noqa: F403
from config.settings.web import *  # noqa: F403
