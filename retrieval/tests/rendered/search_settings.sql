-- The ranking statement's planner settings, sent with it (retrieval/search.py). Local to the
-- transaction: they end with the search. The braces are filled with SQL literals.
-- iterative_scan: HNSW goes on past ef_search candidates until enough rows pass the notebook
-- filter (without it a notebook that is a small part of the index gets fewer than k, or
-- none); relaxed_order lets it return them slightly out of order, which the statements
-- re-sort by exact distance.
-- ef_search by the size of the model's HNSW index, read from the catalogue: recall depends on
-- the graph's size, not the notebook's, and an index of at most `small_index` rows finds the
-- same neighbours with `small_index_ef_search` candidates in less time; a larger one, or one
-- never counted (reltuples -1: not yet vacuumed or analysed), keeps `ef_search`, the setting
-- (bench/README.md, note 3i).
-- enable_sort off: in the HNSW branch the planner would otherwise often prefer the exact plan
-- (read the notebook's chunks, sort them), which the size rule already ruled out; every other
-- sort in the statement has no alternative and still runs.
-- plan_cache_mode: the ranking statement, prepared (retrieval/search.py), runs on the plan
-- made for it once, for any values of its parameters, not on one made again for each
-- question's: the planning cost more than a small notebook's search (bench/README.md, note
-- 3l). That plan is made under these settings (enable_sort off among them).
SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),
       set_config('hnsw.ef_search', (
           CASE WHEN (SELECT reltuples FROM pg_class WHERE oid = to_regclass('library_chunk_hnsw_384_x'))
                     BETWEEN 0 AND 120000
                THEN least(100, 40)
                ELSE 40
           END)::text, true),
       set_config('enable_sort', 'off', true),
       set_config('plan_cache_mode', 'force_generic_plan', true)