-- loupe_rank.c says what the function does.
CREATE FUNCTION loupe_lexeme_share(rel regclass, col text, lexeme text) RETURNS float8
AS 'MODULE_PATHNAME', 'loupe_lexeme_share' LANGUAGE C STABLE STRICT PARALLEL SAFE;
