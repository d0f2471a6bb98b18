"""Searching and answering (retrieval/, generation/): the passages a question gets, how they
are ranked, the conversation's earlier turns; generated documents and video overviews."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_float, env_int, env_str

# Retrieval (docs/retrieval.md). The similarity floor depends on the embedding model: e5 scores
# related and unrelated text close together, so its floor sits higher.
RETRIEVAL_K = env_int("RETRIEVAL_K", 8, minimum=1)
# "Ask about this": one source searched alone, more passages, no floor (docs/retrieval.md).
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
# the floor; uploads come first (docs/retrieval.md).
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
# Video overviews (generation/documents/video.py): the longest narration, the longest
# encoding (within GENERATION_TIMEOUT_SECONDS too) and the largest MP4 kept.
VIDEO_MAX_SECONDS = env_float("VIDEO_MAX_SECONDS", 1200.0)
VIDEO_RENDER_SECONDS = env_float("VIDEO_RENDER_SECONDS", 600.0)
VIDEO_MAX_BYTES = env_int("VIDEO_MAX_BYTES", 200 * 1024 * 1024, minimum=1)
if VIDEO_MAX_SECONDS <= 0 or VIDEO_RENDER_SECONDS <= 0:
    raise ImproperlyConfigured("VIDEO_MAX_SECONDS and VIDEO_RENDER_SECONDS must be more than 0")
