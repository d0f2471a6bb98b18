-- The hybrid search: dense candidates (cosine, the active model's vectors only) and full-text
-- candidates (the question's lexemes OR-ed) over the notebook's ready sources the reader may
-- search, each candidate scored by both and fused, best first; then the generated-slot rule.
-- retrieval/search.py fills the placeholders in braces with what is the same for every
-- search of a model under the same settings and binds the question's own values as
-- parameters, as dense.sql says (a plan made once per connection); retrieval/tests/rendered/
-- holds every variant as it runs. Where a
-- step's shape is odd, its comment says what the planner did otherwise (the figures are in
-- bench/README.md, notes 3 and 4).
WITH
-- The notebook's sources the reader may search (scope.sql, one copy for both statements).
-- The notebook's ready sources (or the one asked about, or those the reader ticked) that the
-- reader may search, by the one access rule (sharing/access.py). `capped`: a generated
-- document's or a note's (both restate the uploads), held to the generated-slot rule; a
-- source asked about alone is never capped.
scope AS MATERIALIZED (
    SELECT id, search_config, chunk_count,
           kind = ANY('{generated,note}'::text[]) AND %(source)s::bigint IS NULL AS capped
    FROM (
        SELECT s.id, s.search_config, s.chunk_count, s.kind
        FROM notebooks_notebooksource ns
        JOIN library_source s ON s.id = ns.source_id
        WHERE ns.notebook_id = %(notebook)s AND s.status = 'ready'
          AND (
        (s.public OR s.owner_id = ns.added_by_id)
        AND EXISTS (
            SELECT 1 FROM notebooks_notebook n
            WHERE n.id = ns.notebook_id AND n.owner_id = %(reader)s
            UNION ALL
            SELECT 1 FROM sharing_membership m
            WHERE m.notebook_id = ns.notebook_id AND m.user_id = %(reader)s
        )
    )
        OFFSET 0
    ) linked
    -- The one asked about, or those ticked, picked from the notebook's (a step of its own,
    -- OFFSET 0): the plan is made once for any values, and with these tests beside the
    -- join it counted on finding one source in the whole library and walked them all.
    WHERE (%(source)s::bigint IS NULL OR id = %(source)s::bigint)
      AND (%(chosen)s::bigint[] IS NULL OR id = ANY(%(chosen)s::bigint[]))
),
-- Which branch ranks the notebook's uploads by their vectors: the HNSW index above `exact_max`
-- chunks, and from `index_min_chunks` up when the notebook holds at least `index_min_share`
-- of the index's rows (pg_class's count; none yet: exact), unless it is compared from its
-- centre (`centre`), which the index cannot do. Below that share the notebook
-- filter makes the index wade through other notebooks' chunks, so a small notebook in a
-- large library was slower through it and missed neighbours; above it the exact scan costs
-- ~1 µs a chunk and the index a few ms whatever the size (bench/README.md, note 3k). The
-- full text follows the same rule in hybrid.sql's `bounded`.
dense_path AS MATERIALIZED (
    SELECT chunks > 10000
           OR (NOT false AND chunks >= 4000
               AND chunks >= 0.03::float8 * coalesce((
                   SELECT reltuples FROM pg_class
                   WHERE oid = to_regclass('library_chunk_hnsw_384_74a28a439c8d57ab') AND reltuples > 0), 'Infinity'))
               AS indexed
    FROM (SELECT coalesce(sum(chunk_count), 0) AS chunks FROM scope WHERE NOT capped) AS notebook
),
-- The mean of the notebook's uploaded chunks' vectors, when `centred` (retrieval/profiles.py)
-- and the notebook's vectors are read whole (`dense_path`): e5 puts every chunk of a
-- collection close to every question (0.8-0.9), in a direction that says little but "this collection"; compared from this centre
-- rather than from the origin, the question meets the passage that says what it asks rather
-- than the passages close to everything (docs/retrieval.md). Otherwise, or with fewer than
-- `centre_min_chunks` embedded (a few chunks are no collection, and a lone chunk is its own
-- centre, with no direction from it), the origin: the comparisons are plain cosines. The
-- mean of every n-th chunk by id, at most about `centre_sample` of them: averaging costs
-- per vector, and such a sample ranked as the whole mean did (bench/README.md).
centre AS MATERIALIZED (
    SELECT coalesce((
        SELECT avg(c.embedding)
        FROM library_chunk c,
             (SELECT greatest(1, ceil(coalesce(sum(chunk_count), 0)::float8
                                      / 250))::bigint AS n
              FROM scope WHERE NOT capped) AS stride
        WHERE false AND c.source_id IN (SELECT id FROM scope WHERE NOT capped)
          AND c.embedding_model = 'example/o''model' AND c.embedding IS NOT NULL
          AND c.id %% stride.n = 0
          AND NOT (SELECT indexed FROM dense_path)
        HAVING count(*) >= 20),
        %(vector)s::vector - %(vector)s::vector) AS point
),
-- The query as seen from the centre.
centred_query AS MATERIALIZED (
    SELECT %(vector)s::vector - point AS vector FROM centre
),
-- A notebook the index does not serve is read whole and sorted: exact. The one-time filter
-- on `dense_path` runs exactly one of the two branches. The plain `<=>` cannot use the HNSW
-- index, so the rows come through the (embedding_model, source) index.
-- Ordered by the distance from the centre (`centre`); each row keeps its plain one too.
uploads_exact AS (
    SELECT c.id, c.embedding <=> %(vector)s::vector AS distance,
           CASE WHEN false
                THEN (c.embedding - (SELECT point FROM centre))
                     <=> (SELECT vector FROM centred_query)
                ELSE c.embedding <=> %(vector)s::vector
           END AS centred_distance
    FROM library_chunk c
    WHERE c.source_id IN (SELECT id FROM scope WHERE NOT capped)
      AND c.embedding_model = 'example/o''model' AND c.embedding IS NOT NULL
      AND NOT (SELECT indexed FROM dense_path)
    ORDER BY centred_distance, c.id
    LIMIT 30
),
-- The others go through the model's HNSW index: the cast and the filter on the model
-- are the index's expression and predicate (library/vector_indexes.py), without which the
-- planner cannot use it. The iterative scan (set beside the statement) goes on until enough
-- of the notebook's chunks pass the filter.
uploads_hnsw AS MATERIALIZED (
    SELECT c.id, c.embedding::vector(384) <=> %(vector)s::vector(384) AS distance
    FROM library_chunk c
    WHERE c.embedding_model = 'example/o''model'
      AND c.source_id IN (SELECT id FROM scope WHERE NOT capped)
      AND (SELECT indexed FROM dense_path)
    ORDER BY c.embedding::vector(384) <=> %(vector)s::vector(384)
    LIMIT 30
),
-- Generated documents and notes are a few chunks each: always exact.
generated AS (
    SELECT c.id, c.embedding <=> %(vector)s::vector AS distance,
           (c.embedding - (SELECT point FROM centre))
               <=> (SELECT vector FROM centred_query) AS centred_distance
    FROM library_chunk c
    WHERE c.source_id IN (SELECT id FROM scope WHERE capped) AND c.embedding_model = 'example/o''model'
      AND c.embedding IS NOT NULL
    ORDER BY centred_distance, c.id
    LIMIT 30
),
candidates AS (
    SELECT id, distance, centred_distance, false AS capped FROM uploads_exact
    -- "+ 0": the planner takes the CTE's rows for sorted by distance, but relaxed_order
    -- may return them slightly out of order; this makes it sort them again.
    UNION ALL SELECT id, distance + 0, distance + 0, false FROM uploads_hnsw
    UNION ALL SELECT id, distance, centred_distance, true FROM generated
),
-- The dense side's best `candidates` (by the distance from the centre); at or above the
-- floor (by the similarity itself).
dense AS (
    SELECT id, 1 - distance AS similarity, capped
    FROM candidates
    ORDER BY centred_distance, id
    LIMIT 30
),
-- The question's lexemes, parsed and stemmed under each text search configuration the
-- notebook's sources were indexed with, so its words meet theirs; quoted for tsquery input
-- (no second normalisation).
terms AS (
    SELECT configs.config, lexeme,
           ('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''')::tsquery AS query
    FROM (SELECT DISTINCT search_config AS config FROM scope) AS configs,
         unnest(tsvector_to_array(to_tsvector(configs.config::regconfig, %(question)s)))
             AS lexeme
),
-- The question's word pairs: each two lexemes next to each other in it once stop words are
-- dropped, as one query that matches a chunk holding both within `proximity_window`
-- positions, in either order ("rate of infection" meets "infection rates" and "rates of new
-- infections"). The share of them a chunk holds lifts it in the fusion: a chunk that says
-- what the question says beats one that merely holds its words here and there.
question_positions AS (
    SELECT configs.config, w.lexeme, p.position,
           ('''' || replace(replace(w.lexeme, '\', '\\'), '''', '''''') || '''')::tsquery AS query
    FROM (SELECT DISTINCT search_config AS config FROM scope) AS configs,
         unnest(to_tsvector(configs.config::regconfig, %(question)s)) AS w,
         unnest(w.positions) AS p(position)
),
neighbours AS (
    SELECT config, position, lexeme, query,
           lead(lexeme) OVER question_order AS next_lexeme,
           lead(query) OVER question_order AS next_query
    FROM question_positions
    WINDOW question_order AS (PARTITION BY config ORDER BY position, lexeme)
),
word_pairs AS (
    SELECT n.config,
           string_agg('(' || tsquery_phrase(o.first, o.second, d.distance)::text || ')', ' | ')
               ::tsquery AS query
    FROM neighbours n
    CROSS JOIN generate_series(1, 4) AS d(distance)
    CROSS JOIN LATERAL (VALUES (n.query, n.next_query), (n.next_query, n.query))
        AS o(first, second)
    WHERE n.next_lexeme <> n.lexeme
    GROUP BY n.config, n.position, n.lexeme
),
-- The word pairs of each configuration as one array, built once: a pool chunk tests them by
-- unnesting it, not by joining the pairs' rows again for every chunk (note 3j).
pair_sets AS MATERIALIZED (
    SELECT config, array_agg(query) AS queries FROM word_pairs GROUP BY config
),
-- The notebook's size decides the full-text path by the rule that sends its vectors through
-- the index (`dense_path`, but for a notebook compared from its centre too): above
-- `exact_max` chunks, and from `index_min_chunks` up when the notebook holds at least
-- `index_min_share` of the model's rows, it is matched through the model's full-text index
-- on its rarest words (`large`); a smaller share of a larger library would read other
-- notebooks' matches there. A large notebook's lexical budget: `lexical_share` of its
-- chunks, at least `lexical_budget`, at most `lexical_most`. A fixed budget is a smaller
-- share of a larger notebook, so it would drop more of the question's words there and rank
-- further from the exact path; the ceiling is what the time allows.
bounded AS MATERIALIZED (
    SELECT chunks,
           chunks > 10000
           OR (chunks >= 4000
               AND chunks >= 0.03::float8 * coalesce((
                   SELECT reltuples FROM pg_class
                   WHERE oid = to_regclass('library_chunk_hnsw_384_74a28a439c8d57ab') AND reltuples > 0), 'Infinity'))
               AS large,
           greatest(1000, least(chunks * 0.1::float8, 4000))
               AS budget
    FROM (SELECT coalesce(sum(chunk_count), 0) AS chunks FROM scope) AS notebook
),
-- Each of the question's lexemes with its share of all chunks, from ANALYZE's sample of the
-- commonest lexemes, which PostgreSQL keeps (nothing to maintain; loupe_lexeme_shares,
-- library/migrations/0021): a lexeme not among them counts half the least listed share, as
-- the planner counts it; with no statistics yet, 0.
term_shares AS MATERIALIZED (
    SELECT t.config, t.lexeme, t.query, s.share
    FROM terms t
    JOIN loupe_lexeme_shares(ARRAY(SELECT DISTINCT lexeme FROM terms)) s ON s.term = t.lexeme
),
-- The question's lexemes of each configuration with their weight in BM25, their idf by that
-- share: by lexeme for loupe_bm25, and as one-word queries for `word_rank`.
term_weights AS MATERIALIZED (
    SELECT config, array_agg(lexeme ORDER BY lexeme) AS lexemes,
           array_agg(weight ORDER BY lexeme) AS weights,
           array_agg(query ORDER BY lexeme) AS queries
    FROM (
        SELECT config, lexeme, query, ln(1 + (1 - share + 0.5 / n) / (share + 0.5 / n)) AS weight
        FROM (SELECT config, lexeme, query, share,
                     greatest((SELECT chunks FROM bounded), 1)::float8 AS n
              FROM term_shares) shared
    ) weighed
    GROUP BY config
),
-- A large notebook matches on the question's rarest lexemes only, as many as together are
-- expected in at most its budget of chunks (`bounded`; always the rarest one), so a common
-- word does not bring in half the notebook. A notebook matched exactly, on all of them.
chosen_terms AS (
    SELECT config, lexeme, query, share,
           NOT (SELECT large FROM bounded) OR place = 1
               OR expected <= (SELECT budget FROM bounded)
               AS chosen
    FROM (
        SELECT config, lexeme, query, share,
               row_number() OVER w AS place,
               sum(share) OVER w * (SELECT chunks FROM bounded) AS expected
        FROM term_shares
        WINDOW w AS (PARTITION BY config ORDER BY share, lexeme ROWS UNBOUNDED PRECEDING)
    ) ranked
),
-- `query`: every lexeme; `match_query`: the chosen ones, to find chunks with, OR-ed: an AND
-- finds nothing for most questions. A large notebook's chunks that hold none of the chosen
-- lexemes rank high only by holding most of the others: `rest_query`, all the others at once
-- (from two on), finds those that hold every one of them; `more_queries`, each of them alone,
-- rarest first, is for a notebook where the chosen ones match too few (`more_matches`);
-- `all_query`, every lexeme at
-- once (from two on), finds the chunks that hold the whole question, read first where the
-- chosen ones are expected in more than half of `matched_most` chunks (`index_matches`; the
-- statistics put a word they do not list at about half its true share): below that the cap
-- is not reached and the extra index scan would cost for nothing.
queries AS (
    SELECT config, string_agg(query::text, ' | ')::tsquery AS query,
           (string_agg(query::text, ' | ') FILTER (WHERE chosen))::tsquery AS match_query,
           CASE WHEN count(*) FILTER (WHERE NOT chosen) >= 2
                THEN (string_agg(query::text, ' & ') FILTER (WHERE NOT chosen))::tsquery
           END AS rest_query,
           array_agg(query ORDER BY share, lexeme) FILTER (WHERE NOT chosen) AS more_queries,
           CASE WHEN count(*) >= 2
                     AND sum(share) FILTER (WHERE chosen) * (SELECT chunks FROM bounded)
                         > 16000 / 2
                THEN string_agg(query::text, ' & ')::tsquery
           END AS all_query
    FROM chosen_terms GROUP BY config
),
-- Every match is first ranked as it is read by `word_rank`: each of the question's words it
-- holds, by ts_rank (which counts a word's repeats, saturating as BM25 does) times the word's
-- idf. That is BM25 in all but the shape of the saturation, computed by PostgreSQL's own
-- functions in a third of loupe_bm25's time; the best `rescored` by it are ranked again by
-- BM25 itself (`rescored`), and the bench's notebooks found their exact BM25 best among them
-- every time (bench/README.md). It is written out term by term (retrieval/statements.py,
-- `word_rank_sql`): a subquery per row cost more than the ranks it sums.
-- A large notebook is matched per configuration through the model's full-text index (the
-- filter on the model is that partial index's predicate, library/vector_indexes.py: without
-- it no index serves). LATERAL ... OFFSET 0 and a step of its own, before the matches meet
-- the notebook's sources: otherwise the planner walked every source's chunks testing each,
-- or ran the index scan once per source.
-- At most `matched_most` matches are read: each costs a read of its row (~5 µs), and where
-- every word of the question is common (its rarest in tens of thousands of a million chunks)
-- reading them all took seconds. The best are read first: the chunks that hold every word
-- of the question, then those that hold all but the chosen ones (`rest_query`), then those
-- that hold a chosen one: each set an index scan of its own, its rows in the table's order
-- (the nested loop runs `tiers` in turn and stops at the LIMIT). One query for them all
-- walked every lexeme's chunks in the index, the common ones' too. A set leaves out the
-- sets before it as its rows are read (`excluded`): written into its index scan's query,
-- the exclusion had the index read the excluded words' chunks as well.
index_matches AS MATERIALIZED (
    SELECT c.id, c.source_id, q.config,
           (coalesce(ts_rank(c.search_vector, w.queries[1]) * w.weights[1], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[2]) * w.weights[2], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[3]) * w.weights[3], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[4]) * w.weights[4], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[5]) * w.weights[5], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[6]) * w.weights[6], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[7]) * w.weights[7], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[8]) * w.weights[8], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[9]) * w.weights[9], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[10]) * w.weights[10], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[11]) * w.weights[11], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[12]) * w.weights[12], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[13]) * w.weights[13], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[14]) * w.weights[14], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[15]) * w.weights[15], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[16]) * w.weights[16], 0)
            + CASE WHEN cardinality(w.queries) > 16 THEN coalesce((SELECT sum(ts_rank(c.search_vector, t.query) * t.weight) FROM unnest(w.queries[17:], w.weights[17:]) AS t(query, weight)), 0) ELSE 0 END) AS word_rank
    FROM queries q
    JOIN term_weights w ON w.config = q.config
    CROSS JOIN LATERAL (
        SELECT c.id, c.source_id, c.search_vector
        FROM (VALUES (1, q.all_query, NULL::tsquery),
                     (2, q.rest_query, q.match_query),
                     (3, q.match_query, q.all_query)) AS tiers(tier, query, excluded)
        CROSS JOIN LATERAL (
            SELECT c.id, c.source_id, c.search_vector
            FROM library_chunk c
            WHERE tiers.query IS NOT NULL
              AND c.embedding_model = 'example/o''model' AND c.search_vector @@ tiers.query
              AND NOT coalesce(c.search_vector @@ tiers.excluded, false)
            OFFSET 0
        ) c
        LIMIT 16000
    ) c
    WHERE (SELECT large FROM bounded)
),
-- A large notebook in which those match fewer than `candidates` of its chunks (a word it does
-- not hold, or holds less often than the whole table's statistics say) is matched on its
-- other lexemes too; without them its full-text side found next to nothing where the exact
-- one finds their best chunks. At most `matched_most` of them, as above: where the chosen
-- words are misspelt, the others can match a quarter of a million-chunk notebook. The rarer
-- a word, the higher its weight, so they are read a word at a time, rarest first, each
-- word's set leaving out the rarer words' (`before`): read as one query, in the table's
-- order, the cap kept a common word's chunks and lost the rare ones' (a misspelt question
-- at 1M found 2 of its exact 8, now 8), and the index read the common words' long lists
-- that the cap never reached.
more_matches AS MATERIALIZED (
    SELECT c.id, c.source_id, q.config,
           (coalesce(ts_rank(c.search_vector, w.queries[1]) * w.weights[1], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[2]) * w.weights[2], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[3]) * w.weights[3], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[4]) * w.weights[4], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[5]) * w.weights[5], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[6]) * w.weights[6], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[7]) * w.weights[7], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[8]) * w.weights[8], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[9]) * w.weights[9], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[10]) * w.weights[10], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[11]) * w.weights[11], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[12]) * w.weights[12], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[13]) * w.weights[13], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[14]) * w.weights[14], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[15]) * w.weights[15], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[16]) * w.weights[16], 0)
            + CASE WHEN cardinality(w.queries) > 16 THEN coalesce((SELECT sum(ts_rank(c.search_vector, t.query) * t.weight) FROM unnest(w.queries[17:], w.weights[17:]) AS t(query, weight)), 0) ELSE 0 END) AS word_rank
    FROM queries q
    JOIN term_weights w ON w.config = q.config
    CROSS JOIN LATERAL (
        SELECT c.id, c.source_id, c.search_vector
        FROM (SELECT t.tier, t.query,
                     (SELECT string_agg(x::text, ' | ')::tsquery
                      FROM unnest(q.more_queries[:t.tier - 1]) AS x) AS before
              FROM unnest(q.more_queries) WITH ORDINALITY AS t(query, tier)
              OFFSET 0) AS tiers
        CROSS JOIN LATERAL (
            SELECT c.id, c.source_id, c.search_vector
            FROM library_chunk c
            WHERE c.embedding_model = 'example/o''model' AND c.search_vector @@ tiers.query
              AND NOT c.search_vector @@ q.match_query
              AND NOT coalesce(c.search_vector @@ q.rest_query, false)
              AND NOT coalesce(c.search_vector @@ tiers.before, false)
            OFFSET 0
        ) c
        LIMIT 16000
    ) c
    WHERE (SELECT large FROM bounded) AND q.more_queries IS NOT NULL
      AND (SELECT count(*) FROM (
               SELECT FROM index_matches m
               JOIN scope ON scope.id = m.source_id AND scope.search_config = m.config
               LIMIT 30) AS found) < 30
),
-- A notebook searched exactly is matched in one bitmap scan: the model's full-text index
-- ANDed with the source index on the array of the notebook's sources, so only its own
-- matches are read from the table. Joined to `scope` row by row the planner ran the index
-- once per source; testing each chunk decompresses every full-text vector; the index alone
-- would read every notebook's matches, a cost that grows with the library. OFFSET 0: the
-- matches first, then `scope`; pulled up into the join, the bitmap scan ran per source.
notebook_matches AS MATERIALIZED (
    SELECT c.id, c.source_id, q.config,
           (coalesce(ts_rank(c.search_vector, w.queries[1]) * w.weights[1], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[2]) * w.weights[2], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[3]) * w.weights[3], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[4]) * w.weights[4], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[5]) * w.weights[5], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[6]) * w.weights[6], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[7]) * w.weights[7], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[8]) * w.weights[8], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[9]) * w.weights[9], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[10]) * w.weights[10], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[11]) * w.weights[11], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[12]) * w.weights[12], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[13]) * w.weights[13], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[14]) * w.weights[14], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[15]) * w.weights[15], 0)
            + coalesce(ts_rank(c.search_vector, w.queries[16]) * w.weights[16], 0)
            + CASE WHEN cardinality(w.queries) > 16 THEN coalesce((SELECT sum(ts_rank(c.search_vector, t.query) * t.weight) FROM unnest(w.queries[17:], w.weights[17:]) AS t(query, weight)), 0) ELSE 0 END) AS word_rank
    FROM queries q
    JOIN term_weights w ON w.config = q.config
    CROSS JOIN LATERAL (
        SELECT c.id, c.source_id, c.search_vector
        FROM library_chunk c
        WHERE c.embedding_model = 'example/o''model' AND c.search_vector @@ q.query
          AND c.source_id = ANY((SELECT array_agg(id) FROM scope)::bigint[])
        OFFSET 0
    ) c
    WHERE NOT (SELECT large FROM bounded)
),
-- The matches in the notebook's own sources, under their own configuration, the best
-- `rescored` by `word_rank` ranked by BM25 (loupe_bm25, library/migrations/0021), whose
-- full-text vector is read again for them alone (LATERAL ... OFFSET 0: joined plainly, the
-- planner read every chunk of the notebook's sources). A chunk of a generated document or
-- note is held to the floor, as on the dense side: its vector looked up for it alone.
rescored AS MATERIALIZED (
    SELECT m.id, m.capped,
           loupe_bm25(c.search_vector, w.lexemes, w.weights, 1.2::float8) AS score
    FROM (
        SELECT m.id, m.config, scope.capped
        FROM (SELECT id, source_id, config, word_rank FROM notebook_matches
              UNION ALL SELECT id, source_id, config, word_rank FROM index_matches
              UNION ALL SELECT id, source_id, config, word_rank FROM more_matches) m
        JOIN scope ON scope.id = m.source_id AND scope.search_config = m.config
        WHERE NOT scope.capped
           OR (SELECT 1 - (f.embedding <=> %(vector)s::vector)
               FROM library_chunk f WHERE f.id = m.id) >= %(floor)s
        ORDER BY m.word_rank DESC, m.id
        LIMIT 100
    ) m
    JOIN term_weights w ON w.config = m.config
    CROSS JOIN LATERAL (
        SELECT c.search_vector FROM library_chunk c WHERE c.id = m.id OFFSET 0
    ) c
),
-- The full-text side's best `candidates`, by BM25.
lexical AS (
    SELECT id, capped, score
    FROM rescored
    ORDER BY score DESC, id
    LIMIT 30
),
-- Every candidate, whichever side found it, is scored by both: scoring a side's misses as 0
-- ranked a chunk just outside one side's candidates as if it matched nothing.
pool AS (
    SELECT id, capped FROM dense WHERE similarity >= %(floor)s
    UNION
    SELECT id, capped FROM lexical
),
-- MATERIALIZED: each pool chunk scored once. Inlined, the fusion below (its min and max over
-- the pool, and the score) made PostgreSQL compute some scores again per reference.
scored AS MATERIALIZED (
    SELECT p.id, p.capped,
           -- Its closest part's similarity (retrieval/windows.py); a chunk without parts by
           -- the model, its own. (Not the higher of the two: that ranked worse.)
           -- Seen from the centre (`centre`), as the dense candidates were chosen.
           coalesce((
               SELECT max(1 - ((w.embedding - o.point) <=> o.query))
               FROM library_chunkwindow w
               WHERE false AND w.chunk_id = c.id AND w.model = 'example/o''model'),
               1 - ((c.embedding - o.point) <=> o.query)) AS similarity,
           -- Its ts_rank against all the question's lexemes, computed for the pool alone, so
           -- a chunk the full-text side did not reach scores as it would among its matches.
           -- ts_rank, not the BM25 that chose the full-text side's candidates: it counts how
           -- many of the question's words a passage holds, which fused with the similarity
           -- ranked covid-qa-dev as before, where BM25 here ranked it lower (bench/README.md,
           -- note 3m). (Looking `lexical`'s score up instead cost more; not through
           -- `queries`: a second reference made it a materialized CTE whose row estimate
           -- turned `all_matches` into a walk through the notebook's chunks.)
           coalesce((
               SELECT ts_rank(c.search_vector, q.query)
               FROM scope
               JOIN (SELECT config, string_agg(query::text, ' | ')::tsquery AS query
                     FROM terms GROUP BY config) q ON q.config = scope.search_config
               WHERE scope.id = c.source_id AND c.search_vector @@ q.query), 0) AS lexical,
           -- The share of the question's word pairs (see `word_pairs`) the chunk holds.
           coalesce((
               SELECT (SELECT avg((c.search_vector @@ q)::int) FROM unnest(ps.queries) AS q)
               FROM scope
               JOIN pair_sets ps ON ps.config = scope.search_config
               WHERE scope.id = c.source_id), 0) AS proximity
    FROM pool p
    JOIN library_chunk c ON c.id = p.id
    CROSS JOIN (SELECT centre.point, centred_query.vector AS query
                FROM centre, centred_query) AS o
),
-- Both scores min-max-normalised over the pool (full text: divided by its best, its least
-- being 0), summed with the dense side's share `dense_weight`, plus `proximity_weight` times
-- the share of the question's word pairs the chunk holds. A chunk not embedded yet (its
-- source is still being embedded) has no similarity: it ranks by its words alone.
fused AS (
    SELECT s.id, s.capped,
        CASE WHEN s.similarity IS NULL THEN 0 ELSE 0.3::float8 * coalesce(
            (s.similarity - min(s.similarity) OVER ())
            / nullif(max(s.similarity) OVER () - min(s.similarity) OVER (), 0), 1) END
        + (1 - 0.3::float8) * coalesce(s.lexical / nullif(max(s.lexical) OVER (), 0), 0)
        + 0.3::float8 * s.proximity AS score
    FROM scored s
),
-- Chunks of generated documents and notes (which restate the uploads) take at most `slots`
-- of the k places, and come after the uploads: an original outranks its paraphrase. The
-- `dense_places` uploads closest in meaning (by `scored`'s similarity) are among the k
-- whatever their words: a question asked in other words than its passage's shares only
-- common words with it, which fill the full-text side with other passages and outweigh its
-- similarity in the fusion (docs/retrieval.md). They keep their fused score's place.
placed AS (
    SELECT f.id, f.capped, f.score,
           row_number() OVER (PARTITION BY f.capped ORDER BY f.score DESC, f.id) AS place,
           row_number() OVER (PARTITION BY f.capped, s.similarity IS NULL
                              ORDER BY s.similarity DESC, f.id) AS dense_place,
           s.similarity IS NULL AS unembedded
    FROM fused f
    JOIN scored s ON s.id = f.id
),
chosen AS (
    SELECT id, capped, score
    FROM placed
    WHERE NOT capped OR place <= 2
    ORDER BY (NOT capped AND NOT unembedded AND dense_place <= 0) DESC,
             score DESC, id
    LIMIT 8
)
-- Each hit carries its cosine similarity, whichever side found it; its chunk and source come
-- with it.
SELECT chosen.id, coalesce(1 - (lc.embedding <=> %(vector)s::vector), 0) AS similarity,
       lc."id", lc."source_id", lc."ordinal", lc."page", lc."page_label", lc."section", lc."text", lc."char_start", lc."char_end", lc."embedding_model", ls."id", ls."status", ls."progress_done", ls."progress_total", ls."error", ls."error_i18n", ls."updated_at", ls."owner_id", ls."kind", ls."title", ls."filename", ls."sha256", ls."file", ls."url", ls."pdf_capture", ls."reader", ls."reader_i18n", ls."size_bytes", ls."page_count", ls."chunk_count", ls."language", ls."search_config", ls."stage", ls."summary", ls."summary_mode", ls."summary_error", ls."summary_error_i18n", ls."public", ls."published_by_id", ls."published_at", ls."created_at"
FROM chosen
JOIN library_chunk lc ON lc.id = chosen.id JOIN library_source ls ON ls.id = lc.source_id
ORDER BY chosen.capped, chosen.score DESC, chosen.id
