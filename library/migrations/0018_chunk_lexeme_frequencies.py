from django.db import migrations

# The share of all chunks holding each of the commonest full-text lexemes, from ANALYZE's
# sample (pg_stats), for the hybrid search's lexical budget (retrieval/sql/hybrid.sql,
# `lexeme_stats`). Read inline, the pg_stats view (four catalogues and their access checks)
# was planned again in every hybrid search, large notebook or not; PL/pgSQL plans its query
# once per connection and the search plans a function call (bench/README.md, note 3j).
CREATE = """
CREATE OR REPLACE FUNCTION loupe_chunk_lexeme_frequencies()
RETURNS TABLE (lexeme text, frequency real)
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN QUERY
    SELECT e.lexeme, e.frequency
    FROM pg_stats s,
         unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs)
             AS e(lexeme, frequency)
    WHERE s.schemaname = current_schema() AND s.tablename = 'library_chunk'
      AND s.attname = 'search_vector' AND e.lexeme IS NOT NULL;
END
$$
"""


class Migration(migrations.Migration):
    dependencies = [("library", "0017_source_kind_note")]

    operations = [
        migrations.RunSQL(
            sql=CREATE, reverse_sql="DROP FUNCTION IF EXISTS loupe_chunk_lexeme_frequencies()"
        )
    ]
