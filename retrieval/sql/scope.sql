-- The notebook's ready sources (or the one asked about, or those the reader ticked) that the
-- reader may search, by the one access rule (sharing/access.py). `capped`: a generated
-- document's or a note's (both restate the uploads), held to the generated-slot rule; a
-- source asked about alone is never capped.
scope AS MATERIALIZED (
    SELECT id, search_config, chunk_count,
           kind = ANY({capped_kinds}::text[]) AND %(source)s::bigint IS NULL AS capped
    FROM (
        SELECT s.id, s.search_config, s.chunk_count, s.kind
        FROM notebooks_notebooksource ns
        JOIN library_source s ON s.id = ns.source_id
        WHERE ns.notebook_id = %(notebook)s AND s.status = {ready}
          AND {searchable_link}
        OFFSET 0
    ) linked
    -- The one asked about, or those ticked, picked from the notebook's (a step of its own,
    -- OFFSET 0): the plan is made once for any values, and with these tests beside the
    -- join it counted on finding one source in the whole library and walked them all.
    WHERE (%(source)s::bigint IS NULL OR id = %(source)s::bigint)
      AND (%(chosen)s::bigint[] IS NULL OR id = ANY(%(chosen)s::bigint[]))
)
