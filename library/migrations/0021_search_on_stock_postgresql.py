from django.db import migrations

# The hybrid search (retrieval/sql/hybrid.sql) runs on what every PostgreSQL with pgvector
# offers: its BM25 ranking and its idf are the two SQL functions below, where they were C
# extensions of Loupe's own build (pg_textsearch's BM25 index and loupe_rank), which no
# managed PostgreSQL could load. A database that has those extensions loses them here, with
# the BM25 indexes made with them; CASCADE: their functions, operators and indexes go with
# them. The same names and arguments as loupe_rank's, so the search's statement is the same.

# loupe_bm25(doc, terms, weights, k1): the BM25 score of `doc` for the question's lexemes
# `terms`, each weighted by its `weights` entry (its idf): for each term doc holds,
# weight * tf * (k1 + 1) / (tf + k1), tf being the lexeme's count of positions. No length
# normalisation (b = 0): chunks are windows of about one length. setweight marks the terms'
# positions, ts_filter keeps those: the vector is cut to the question's lexemes in C before
# anything is unnested (a chunk's stored vector has positions, and every position weight D).
BM25 = """
CREATE FUNCTION loupe_bm25(doc tsvector, terms text[], weights float8[], k1 float8)
RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT coalesce(sum(weights[array_position(terms, e.lexeme)] * e.tf * (k1 + 1)
                        / (e.tf + k1)), 0)
    FROM (SELECT d.lexeme, greatest(cardinality(d.positions), 1) AS tf
          FROM unnest(ts_filter(setweight(doc, 'A', terms), '{a}'))
              AS d(lexeme, positions, marks)) AS e
$$
"""

# loupe_lexeme_shares(lexemes): each lexeme's share of the chunks whose full-text vector
# holds it, from ANALYZE's sample of the commonest lexemes (pg_stats): a lexeme not listed
# counts half the least listed share, as the planner counts it; with no statistics yet, 0.
# PL/pgSQL plans its query once per connection: inline, the pg_stats view (four catalogues
# and their access checks) was planned again in every search.
SHARES = """
CREATE FUNCTION loupe_lexeme_shares(lexemes text[])
RETURNS TABLE (term text, share float8)
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN QUERY
    WITH listed AS (
        SELECT e.lexeme, e.frequency::float8 AS frequency
        FROM pg_stats s,
             unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs)
                 AS e(lexeme, frequency)
        WHERE s.schemaname = current_schema() AND s.tablename = 'library_chunk'
          AND s.attname = 'search_vector' AND e.lexeme IS NOT NULL
    )
    SELECT q.lexeme, coalesce(l.frequency, (SELECT min(m.frequency) / 2 FROM listed m), 0)
    FROM unnest(lexemes) AS q(lexeme)
    LEFT JOIN listed l ON l.lexeme = q.lexeme;
END
$$
"""


MISSING_LIBRARY = (
    "This database still has the pg_textsearch extension that older versions of Loupe "
    "built, and this server no longer has its library, so only a superuser can drop it. "
    "Connect as one and run: UPDATE pg_am SET amhandler = 'gisthandler'::regproc WHERE "
    "amname = 'bm25'; DROP EXTENSION loupe_rank CASCADE; DROP EXTENSION pg_textsearch "
    "CASCADE; then migrate again (docs/deploy.md, Upgrading). PostgreSQL said: {error}"
)


def drop_extensions(apps, schema_editor):
    from django.db import OperationalError, transaction

    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT FROM pg_am WHERE amname = 'bm25'), "
            "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)"
        )
        bm25_method, superuser = cursor.fetchone()
        if bm25_method and superuser:
            # Dropping a BM25 index (with either extension: the index reads loupe_rank's
            # function) opens it through its access method's handler, which pg_textsearch's
            # library holds, and a new install or the stock database image no longer has.
            # A built-in handler stands in while they are dropped, unread, in this
            # transaction. Only a superuser may change the catalogue; the embedded server's
            # role is one.
            cursor.execute(
                "UPDATE pg_am SET amhandler = 'gisthandler'::regproc WHERE amname = 'bm25'"
            )
        try:
            with transaction.atomic():
                cursor.execute("DROP EXTENSION IF EXISTS loupe_rank CASCADE")
                cursor.execute("DROP EXTENSION IF EXISTS pg_textsearch CASCADE")
        except OperationalError as error:
            raise RuntimeError(MISSING_LIBRARY.format(error=str(error).strip())) from error


class Migration(migrations.Migration):
    dependencies = [("library", "0020_lexeme_share")]

    operations = [
        migrations.RunPython(drop_extensions, migrations.RunPython.noop),
        migrations.RunSQL(sql=BM25, reverse_sql="DROP FUNCTION loupe_bm25"),
        migrations.RunSQL(sql=SHARES, reverse_sql="DROP FUNCTION loupe_lexeme_shares"),
    ]
