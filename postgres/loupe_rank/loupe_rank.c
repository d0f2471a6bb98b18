/*
 * loupe_rank: what the hybrid search (retrieval/sql/hybrid.sql) needs from a chunk's stored
 * full-text vector and PostgreSQL has not built in.
 *
 * loupe_bm25(doc, terms, weights, k1): the BM25 score of `doc` for the question's lexemes
 * `terms`, each weighted by its `weights` entry (its idf): for each term doc holds,
 * weight * tf * (k1 + 1) / (tf + k1), tf being the lexeme's count of positions (1 when the
 * vector has none). No length normalisation (BM25's b = 0): chunks are windows of about one
 * length. PostgreSQL's ts_rank counts a word by its presence, not by its rarity; a ranking
 * of the matches that weighs rare words more is what the BM25 index (pg_textsearch) returns
 * for a large notebook, and the exact path must rank as it does.
 *
 * loupe_lexeme_text(doc): the lexemes of `doc`, each as many times as it has positions,
 * separated by spaces: the text the BM25 index reads (under the 'simple' configuration, so
 * that it counts the lexemes each source was stemmed into, in whatever language).
 *
 * loupe_lexeme_share(rel, column, lexeme): the share of `rel`'s rows whose full-text vector
 * in `column` holds `lexeme`, from ANALYZE's sample of its commonest lexemes (pg_statistic's
 * MCELEM slot, which pg_stats shows as most_common_elems): a lexeme not listed counts half
 * the least listed share, as the planner counts it; with no statistics yet, 0. The idf of
 * BM25 weighs each of the question's words by it. Read through pg_stats instead, the whole
 * list (a thousand lexemes) was cast to text and parsed again in every search.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "tsearch/ts_type.h"
#include "tsearch/ts_utils.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(loupe_bm25);
PG_FUNCTION_INFO_V1(loupe_lexeme_text);
PG_FUNCTION_INFO_V1(loupe_lexeme_share);

static int
entry_frequency(TSVector doc, WordEntry *entry)
{
	return entry->haspos ? Max(1, POSDATALEN(doc, entry)) : 1;
}

/* The count of `word`'s positions in `doc` (binary search: lexemes are sorted), 0 if absent. */
static int
term_frequency(TSVector doc, const char *word, int len)
{
	WordEntry  *entries = ARRPTR(doc);
	char	   *strings = STRPTR(doc);
	int			low = 0;
	int			high = doc->size - 1;

	while (low <= high)
	{
		int			middle = low + (high - low) / 2;
		WordEntry  *entry = &entries[middle];
		int			cmp = tsCompareString(strings + entry->pos, entry->len,
										  (char *) word, len, false);

		if (cmp == 0)
			return entry_frequency(doc, entry);
		if (cmp < 0)
			low = middle + 1;
		else
			high = middle - 1;
	}
	return 0;
}

Datum
loupe_bm25(PG_FUNCTION_ARGS)
{
	TSVector	doc = PG_GETARG_TSVECTOR(0);
	ArrayType  *terms = PG_GETARG_ARRAYTYPE_P(1);
	ArrayType  *weights = PG_GETARG_ARRAYTYPE_P(2);
	float8		k1 = PG_GETARG_FLOAT8(3);
	Datum	   *term_values;
	bool	   *term_nulls;
	int			term_count;
	Datum	   *weight_values;
	bool	   *weight_nulls;
	int			weight_count;
	float8		score = 0;
	int			i;

	deconstruct_array_builtin(terms, TEXTOID, &term_values, &term_nulls, &term_count);
	deconstruct_array_builtin(weights, FLOAT8OID, &weight_values, &weight_nulls, &weight_count);
	if (term_count != weight_count)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("loupe_bm25: %d terms but %d weights", term_count, weight_count)));
	for (i = 0; i < term_count; i++)
	{
		text	   *term;
		int			tf;

		if (term_nulls[i] || weight_nulls[i])
			continue;
		term = DatumGetTextPP(term_values[i]);
		tf = term_frequency(doc, VARDATA_ANY(term), VARSIZE_ANY_EXHDR(term));
		if (tf > 0)
			score += DatumGetFloat8(weight_values[i]) * tf * (k1 + 1) / (tf + k1);
	}
	PG_FREE_IF_COPY(doc, 0);
	PG_RETURN_FLOAT8(score);
}

Datum
loupe_lexeme_text(PG_FUNCTION_ARGS)
{
	TSVector	doc = PG_GETARG_TSVECTOR(0);
	WordEntry  *entries = ARRPTR(doc);
	char	   *strings = STRPTR(doc);
	StringInfoData out;
	int			i;

	initStringInfo(&out);
	for (i = 0; i < doc->size; i++)
	{
		int			repeats = entry_frequency(doc, &entries[i]);

		while (repeats-- > 0)
		{
			if (out.len > 0)
				appendStringInfoChar(&out, ' ');
			appendBinaryStringInfo(&out, strings + entries[i].pos, entries[i].len);
		}
	}
	PG_FREE_IF_COPY(doc, 0);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out.data, out.len));
}

Datum
loupe_lexeme_share(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *column = text_to_cstring(PG_GETARG_TEXT_PP(1));
	text	   *lexeme = PG_GETARG_TEXT_PP(2);
	AttrNumber	attnum = get_attnum(relid, column);
	HeapTuple	statistics;
	AttStatsSlot slot;
	float8		share = 0;
	int			i;

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("loupe_lexeme_share: relation %u has no column \"%s\"", relid, column)));
	/* What pg_stats shows only to those who may read the column. */
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck(relid, attnum, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("loupe_lexeme_share: permission denied for column \"%s\"", column)));
	statistics = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
								 Int16GetDatum(attnum), BoolGetDatum(false));
	if (!HeapTupleIsValid(statistics))
		PG_RETURN_FLOAT8(0);
	if (get_attstatsslot(&slot, statistics, STATISTIC_KIND_MCELEM, InvalidOid,
						 ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS))
	{
		/* The numbers: each listed lexeme's share, then the least and the greatest of them. */
		if (slot.nvalues > 0 && slot.nnumbers >= slot.nvalues + 2)
		{
			share = slot.numbers[slot.nvalues] / 2;
			for (i = 0; i < slot.nvalues; i++)
			{
				text	   *listed = DatumGetTextPP(slot.values[i]);

				if (VARSIZE_ANY_EXHDR(listed) == VARSIZE_ANY_EXHDR(lexeme) &&
					memcmp(VARDATA_ANY(listed), VARDATA_ANY(lexeme),
						   VARSIZE_ANY_EXHDR(lexeme)) == 0)
				{
					share = slot.numbers[i];
					break;
				}
			}
		}
		free_attstatsslot(&slot);
	}
	ReleaseSysCache(statistics);
	PG_RETURN_FLOAT8(share);
}
