-- The dense search: the k chunks nearest the question's vector, by cosine distance, among the
-- notebook's ready sources the reader may search; uploads first, then at most
-- `generated_candidates` chunks of generated documents and notes, each part best first.
-- retrieval/search.py fills the placeholders in braces with what is the same for every
-- search of a model under the same settings (the model, the limits, the HNSW index's type,
-- the columns that load the hits, the access rule) and binds the question's own values (the
-- notebook, the reader, the vector, ...) as parameters: the statement is prepared once per
-- connection and runs on a plan made once, which the model's partial indexes can serve
-- only when the model is written in it. retrieval/tests/rendered/ holds every variant.
WITH
-- The notebook's sources the reader may search (scope.sql, one copy for both statements).
{scope},
-- Which branch ranks the notebook's uploads by their vectors: the HNSW index above `exact_max`
-- chunks, and from `index_min_chunks` up when the notebook holds at least `index_min_share`
-- of the index's rows (pg_class's count; none yet: exact). Below that share the notebook
-- filter makes the index wade through other notebooks' chunks, so a small notebook in a
-- large library was slower through it and missed neighbours; above it the exact scan costs
-- ~1 µs a chunk and the index a few ms whatever the size (bench/README.md, note 3k). The
-- full text follows the same rule in hybrid.sql's `bounded`.
dense_path AS MATERIALIZED (
    SELECT chunks > {exact_max}
           OR (chunks >= {index_min_chunks}
               AND chunks >= {index_min_share} * coalesce((
                   SELECT reltuples FROM pg_class
                   WHERE oid = to_regclass({hnsw_index}) AND reltuples > 0), 'Infinity'))
               AS indexed
    FROM (SELECT coalesce(sum(chunk_count), 0) AS chunks FROM scope WHERE NOT capped) AS notebook
),
-- A notebook the index does not serve is read whole and sorted: exact. The one-time filter
-- on `dense_path` runs exactly one of the two branches. The plain `<=>` cannot use the HNSW
-- index, so the rows come through the (embedding_model, source) index.
uploads_exact AS (
    SELECT c.id, c.embedding <=> %(vector)s::vector AS distance
    FROM library_chunk c
    WHERE c.source_id IN (SELECT id FROM scope WHERE NOT capped)
      AND c.embedding_model = {model} AND c.embedding IS NOT NULL
      AND NOT (SELECT indexed FROM dense_path)
    ORDER BY distance, c.id
    LIMIT {candidates}
),
-- The others go through the model's HNSW index: the cast and the filter on the model
-- are the index's expression and predicate (library/vector_indexes.py), without which the
-- planner cannot use it. The iterative scan (set beside the statement) goes on until enough
-- of the notebook's chunks pass the filter.
uploads_hnsw AS MATERIALIZED (
    SELECT c.id, c.embedding::{index_vector} <=> %(vector)s::{index_vector} AS distance
    FROM library_chunk c
    WHERE c.embedding_model = {model}
      AND c.source_id IN (SELECT id FROM scope WHERE NOT capped)
      AND (SELECT indexed FROM dense_path)
    ORDER BY c.embedding::{index_vector} <=> %(vector)s::{index_vector}
    LIMIT {candidates}
),
-- Generated documents and notes are a few chunks each: always exact.
generated AS (
    SELECT c.id, c.embedding <=> %(vector)s::vector AS distance
    FROM library_chunk c
    WHERE c.source_id IN (SELECT id FROM scope WHERE capped) AND c.embedding_model = {model}
      AND c.embedding IS NOT NULL
    ORDER BY distance, c.id
    LIMIT {generated_candidates}
),
candidates AS (
    SELECT id, distance, false AS capped FROM uploads_exact
    -- "+ 0": the planner takes the CTE's rows for sorted by distance, but relaxed_order
    -- may return them slightly out of order; this makes it sort them again.
    UNION ALL SELECT id, distance + 0, false FROM uploads_hnsw
    UNION ALL SELECT id, distance, true FROM generated
)
-- Uploads fill the slots by similarity; chunks of generated documents (which restate the
-- uploads) may take at most `generated_candidates` (the generated slots) of them, and come
-- after the uploads, so an original always outranks its paraphrase (docs/retrieval.md).
-- Everything is held to the floor. The hits'
-- chunks and sources come with the ranking: a second query to load them cost more than the
-- columns do here.
SELECT chosen.id, chosen.similarity, {loaded_columns} FROM (
    SELECT id, 1 - distance AS similarity, capped, distance
    FROM candidates
    WHERE 1 - distance >= %(floor)s
    ORDER BY distance, id
    LIMIT {k}
) chosen
JOIN library_chunk lc ON lc.id = chosen.id JOIN library_source ls ON ls.id = lc.source_id
ORDER BY chosen.capped, chosen.distance, chosen.id
