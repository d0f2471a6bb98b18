-- loupe_rank.c says what each function does.
CREATE FUNCTION loupe_bm25(doc tsvector, terms text[], weights float8[], k1 float8)
RETURNS float8 AS 'MODULE_PATHNAME', 'loupe_bm25' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION loupe_lexeme_text(doc tsvector) RETURNS text
AS 'MODULE_PATHNAME', 'loupe_lexeme_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION loupe_lexeme_share(rel regclass, col text, lexeme text) RETURNS float8
AS 'MODULE_PATHNAME', 'loupe_lexeme_share' LANGUAGE C STABLE STRICT PARALLEL SAFE;
