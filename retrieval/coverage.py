"""Whether the passages a search found cover the question at all, from what the search knows.

A search always returns its best passages, even for a question the sources say nothing
about ("Who painted the Mona Lisa?" in a Linux manual): answered from them, it quotes
unrelated sentences with citations. Two signals tell the cases apart:

- `similarity`: the best similarity between the question's vector and a passage's closest
  part (its windows, retrieval/windows.py; else the passage's own vector). Its scale is the
  embedding model's own, so its threshold is per model.
- `words`: how much of the question's word weight the passages hold. Each of the question's
  words (stemmed as its source is, stop words dropped) weighs its rarity among the searched
  sources' chunks (BM25's idf: all the sources the search read, not only those it found, so
  that the weights do not change with how many passages it returns), and `words` is the
  share of that weight found in at least one of the passages (a word in no chunk weighs as
  one in a single chunk). A question
  whose rare words the sources never use ("Mona", "Lisa", "paint") scores low whatever the
  model.

The question is covered when either signal clears its threshold; a model without a measured
similarity threshold is judged by its words alone, leniently. The thresholds and why:
docs/retrieval.md ("Questions the sources do not cover").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection

from library.languages import detect_language, search_config
from library.models import Source
from retrieval import profiles
from retrieval.search import CAPPED_KINDS, Hit, vector_literal
from retrieval.statements import rendered

# Whatever the similarity, a question whose passages hold this share of its word weight is
# covered. Off-topic questions share some common words with any collection ("fall" of "When
# did the Roman Empire fall?"): at most 0.65 of their weight on manual-qa, 0.59 on the office
# files of ../shared/data/formats. Answerable questions about short slides, sheets and
# sections often sit under the similarity threshold, where their passages hold all but a
# word the document never uses ("much" of "How much ...": 0.75-0.79); 0.7 lies between
# (docs/retrieval.md, "Questions the sources do not cover").
WORDS_COVER = 0.7
# A model without a similarity threshold (an API model, the universal sentence encoder: not
# measured) is judged by its words alone, and refuses only when the passages hold under this
# share, below every answerable question of manual-qa: its similarities are on its own
# scale, a threshold guessed for them could refuse good questions, and with a chat model
# the model still says when the passages do not answer.
WORDS_FALLBACK = 0.15


@dataclass(frozen=True)
class Coverage:
    # None: no hit has a vector of the model, or the model has no similarity threshold
    # (its similarity would decide nothing, so it is not asked for)
    similarity: float | None
    words: float | None  # None: the similarity alone covered the question
    covered: bool


# The rarity of a question's words is counted over at most this many of the searched sources'
# chunks, every n-th: testing each word against every chunk of a 100k-chunk notebook would
# cost seconds before each answer, and rarity needs no exact count.
RARITY_SAMPLE = 2000

# Per configuration of the searched sources (each stems the question its own way): each of
# the question's lexemes, in how many of the sampled chunks of those sources it occurs, how
# many chunks were sampled, and in how many of the hits it occurs. The chunks are the
# model's (each source's chunks exist once per model). The searched sources are the search's
# own scope (retrieval/sql/scope.sql, written in where it says {scope}, with its parameters).
_WORDS_SQL = r"""
WITH {scope},
configs AS (SELECT DISTINCT search_config AS config FROM scope),
-- The question's words without its own stop words, dropped as its language does: stemmed
-- only by its sources' configuration, a question asked in another language than theirs, or
-- of a sheet or slides whose language could not be told ('simple', which drops no word),
-- would count its "what", "the" and "is" as the rarest words, ones its passages lack.
question_words AS (
    SELECT coalesce(string_agg(token, ' '), '') AS text
    FROM ts_debug(%(question_config)s::regconfig, %(question)s)
    WHERE cardinality(lexemes) > 0
),
lexemes AS (
    SELECT configs.config, lexeme,
           ('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''')::tsquery AS query
    FROM configs, question_words,
         unnest(tsvector_to_array(to_tsvector(configs.config::regconfig, question_words.text)))
             AS lexeme
),
-- Every n-th of the sources' chunks, counted through them in order (by source, then
-- ordinal), so that at most RARITY_SAMPLE are tested; each source's size is its last
-- ordinal and each sampled chunk one lookup, both in the (source, ordinal) index: the
-- cost stays that of the sample however large the notebook.
counted AS MATERIALIZED (
    SELECT scope.id, scope.search_config,
           coalesce((SELECT max(c.ordinal) + 1 FROM library_chunk c
                     WHERE c.source_id = scope.id), 0) AS chunks
    FROM scope
),
sizes AS MATERIALIZED (
    SELECT id, search_config, chunks, sum(chunks) OVER (ORDER BY id) - chunks AS before
    FROM counted
),
stride AS (
    SELECT greatest(1, ceil(coalesce(sum(chunks), 0)::float8 / %(sample)s))::bigint AS n
    FROM sizes
),
chunks AS MATERIALIZED (
    SELECT c.id, c.search_vector, sizes.search_config AS config
    FROM sizes CROSS JOIN stride
    CROSS JOIN LATERAL generate_series(
        (stride.n - sizes.before %% stride.n) %% stride.n, sizes.chunks - 1, stride.n
    ) AS sampled(ordinal)
    -- One lookup a sampled chunk (OFFSET 0: a step of its own): joined, the plan read
    -- every chunk of each source into a hash, 0.2 s for a notebook of 61,000.
    CROSS JOIN LATERAL (
        SELECT c.id, c.search_vector FROM library_chunk c
        WHERE c.source_id = sizes.id AND c.ordinal = sampled.ordinal
          AND c.embedding_model = %(model)s
        OFFSET 0
    ) c
),
hits AS MATERIALIZED (
    SELECT c.search_vector, s.search_config AS config
    FROM library_chunk c JOIN library_source s ON s.id = c.source_id
    WHERE c.id = ANY(%(hits)s)
)
SELECT l.config, l.lexeme,
       (SELECT count(*) FROM chunks c WHERE c.config = l.config) AS total,
       (SELECT count(*) FROM chunks c
        WHERE c.config = l.config AND c.search_vector @@ l.query) AS df,
       (SELECT count(*) FROM hits h WHERE h.config = l.config AND h.search_vector @@ l.query)
           AS in_hits
FROM lexemes l
"""

_SIMILARITY_SQL = """
SELECT max(similarity) FROM (
    SELECT 1 - (w.embedding <=> %(vector)s::vector) AS similarity
    FROM library_chunkwindow w WHERE w.chunk_id = ANY(%(hits)s) AND w.model = %(model)s
    UNION ALL
    SELECT 1 - (c.embedding <=> %(vector)s::vector)
    FROM library_chunk c WHERE c.id = ANY(%(hits)s) AND c.embedding IS NOT NULL
) s
"""


def _words_sql() -> str:
    # The statement holds no vector: no dimensions to write in.
    constants = (("ready", Source.Status.READY.value), ("capped_kinds", CAPPED_KINDS))
    return rendered(_WORDS_SQL, 0, constants)


def _params(
    *,
    question: str,
    hits: Sequence[Hit],
    query_vector: list[float] | None,
    model: str,
    scope: dict[str, Any],
) -> dict[str, Any]:
    return {
        **scope,
        "question": question,
        # The configuration of the question's own language, for its stop words.
        "question_config": search_config(detect_language(question)),
        "model": model,
        "hits": [hit.chunk.pk for hit in hits],
        "sample": RARITY_SAMPLE,
        "vector": None if query_vector is None else vector_literal(query_vector),
    }


def signals(
    *,
    question: str,
    hits: Sequence[Hit],
    query_vector: list[float],
    model: str,
    scope: dict[str, Any],
) -> tuple[float | None, list[tuple[str, str, int, int, int]]]:
    """The best similarity among the hits' windows and vectors, and per configuration of the
    searched sources (`scope`: retrieval/search.py's scope_params) each of the question's
    lexemes with the number of those sources' chunks, how many hold it and how many of the
    hits do: both statements in one message (what bench/coverage_signals.py dumps;
    `assess` asks only for what decides)."""
    params = _params(
        question=question, hits=hits, query_vector=query_vector, model=model, scope=scope
    )
    with connection.cursor() as cursor:
        cursor.execute(_SIMILARITY_SQL + ";\n" + _words_sql(), params)
        (similarity,) = cursor.fetchone()
        cursor.nextset()
        counts = cursor.fetchall()
    return (None if similarity is None else float(similarity)), counts


def best_similarity(*, hits: Sequence[Hit], query_vector: list[float], model: str) -> float | None:
    """The best similarity among the hits' windows and vectors; None: none has a vector."""
    params = _params(question="", hits=hits, query_vector=query_vector, model=model, scope={})
    with connection.cursor() as cursor:
        cursor.execute(_SIMILARITY_SQL, params)
        (similarity,) = cursor.fetchone()
    return None if similarity is None else float(similarity)


def word_counts(
    *, question: str, hits: Sequence[Hit], model: str, scope: dict[str, Any]
) -> list[tuple[str, str, int, int, int]]:
    """The lexeme counts of `signals`, alone."""
    params = _params(question=question, hits=hits, query_vector=None, model=model, scope=scope)
    with connection.cursor() as cursor:
        cursor.execute(_words_sql(), params)
        return cursor.fetchall()


def word_share(counts: list[tuple[str, str, int, int, int]]) -> float:
    """The share of the question's idf-weighted lexemes (`counts`) found in the hits, under
    the best of the searched sources' configurations; 1.0 for a question with no lexeme
    (nothing to judge it by)."""
    found: dict[str, float] = {}
    weight: dict[str, float] = {}
    for config, _lexeme, total, df, in_hits in counts:
        # A word in no chunk weighs as one in a single chunk: nothing says how much rarer
        # it is, and unbounded it would drown the words a small notebook does hold (in a
        # one-chunk notebook, every word it holds is in every chunk).
        idf = math.log(1 + (total - max(df, 1) + 0.5) / (max(df, 1) + 0.5))
        weight[config] = weight.get(config, 0.0) + idf
        found[config] = found.get(config, 0.0) + (idf if in_hits else 0.0)
    shares = [found[config] / weight[config] for config in weight if weight[config] > 0]
    return max(shares) if shares else 1.0


def assess(
    *,
    question: str,
    hits: Sequence[Hit],
    query_vector: list[float],
    model: str,
    scope: dict[str, Any],
) -> Coverage:
    """How well `hits` (the search's passages for `question`, embedded by `model` as
    `query_vector`, from the sources `scope` names: retrieval/search.py's scope_params)
    cover it; no hits cover nothing.

    Each signal is asked for only when it can decide (one statement on the way to an
    answer's first word, bench/README.md, streaming overhead): the similarity only for a
    model with a threshold, the word share only when the similarity did not cover the
    question. The judgement is the same as with both."""
    if not hits:
        return Coverage(similarity=None, words=0.0, covered=False)
    # The model's own threshold (retrieval/profiles.py): found with bench/coverage_signals.py.
    threshold = profiles.profile(model).covered_similarity
    similarity = (
        None
        if threshold is None
        else best_similarity(hits=hits, query_vector=query_vector, model=model)
    )
    if threshold is not None and similarity is not None and similarity >= threshold:
        return Coverage(similarity=similarity, words=None, covered=True)
    words = word_share(word_counts(question=question, hits=hits, model=model, scope=scope))
    if threshold is None or similarity is None:
        covered = words >= WORDS_FALLBACK
    else:
        covered = words >= WORDS_COVER
    return Coverage(similarity=similarity, words=words, covered=covered)
