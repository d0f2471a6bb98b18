"""Reading sources (ingest/): PDFs, images, recordings and web pages, each within its bounds;
their summaries, chunks and the embedding of those chunks."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_float, env_int, env_str

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
IMAGE_MAX_BYTES = env_int("IMAGE_MAX_BYTES", 20 * 1024 * 1024, minimum=1)
# Also Pillow's decompression-bomb limit (Image.MAX_IMAGE_PIXELS), set where images are opened.
IMAGE_MAX_PIXELS = env_int("IMAGE_MAX_PIXELS", 50_000_000, minimum=1)
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

# A summary per source (ingest/summaries.py). auto: written by the chat model when one is
# configured, else extractive (the document's most central sentences); extractive: always so.
SOURCE_SUMMARIES = env_str("SOURCE_SUMMARIES", "auto").lower()
if SOURCE_SUMMARIES not in {"auto", "extractive"}:
    raise ImproperlyConfigured(
        f"SOURCE_SUMMARIES must be auto or extractive, got {SOURCE_SUMMARIES!r}"
    )

# Chunking (docs/architecture.md, "Chunks and embeddings").
CHUNK_TOKENS = env_int("CHUNK_TOKENS", 420, minimum=10)
CHUNK_OVERLAP_TOKENS = env_int("CHUNK_OVERLAP_TOKENS", 50, minimum=0)
if CHUNK_OVERLAP_TOKENS >= CHUNK_TOKENS:
    raise ImproperlyConfigured("CHUNK_OVERLAP_TOKENS must be smaller than CHUNK_TOKENS")
# A source is searchable by its words as soon as it is read; its chunks are then embedded
# INGEST_EMBED_CHUNKS at a time (each batch committed, so an interrupted source resumes),
# and a job that has worked INGEST_SLICE_SECONDS, or sees another ingest job waiting, hands
# the rest to a job of its own behind any source added meanwhile (ingest/services/embedding.py).
INGEST_EMBED_CHUNKS = env_int("INGEST_EMBED_CHUNKS", 8, minimum=1)
INGEST_SLICE_SECONDS = env_float("INGEST_SLICE_SECONDS", 5.0)
