-- A source read through: its chunks cut into `parts` consecutive stretches of about as many
-- chunks each (in reading order), and from each stretch the chunk nearest the query's vector.
-- What a generator reads to cover a whole document, not only the part that best matches one
-- query (generation/documents/inputs.py). The caller has checked the reader's access to
-- the source. retrieval/search.py fills the placeholders in braces, as for dense.sql.
SELECT chosen.id, chosen.similarity, {loaded_columns} FROM (
    SELECT DISTINCT ON (part) id, similarity
    FROM (
        SELECT c.id, ntile(%(parts)s) OVER (ORDER BY c.ordinal) AS part,
               1 - (c.embedding <=> %(vector)s::vector) AS similarity
        FROM library_chunk c
        WHERE c.source_id = %(source)s AND c.embedding_model = {model}
          AND c.embedding IS NOT NULL
    ) AS stretches
    ORDER BY part, similarity DESC, id
) chosen
JOIN library_chunk lc ON lc.id = chosen.id JOIN library_source ls ON ls.id = lc.source_id
ORDER BY lc.ordinal
