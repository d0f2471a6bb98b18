"""The word share of retrieval/coverage.py on the counts a small document gives: a question
whose passages hold every word but one the document never uses ("much") is covered, as
the question about the sources it is; one whose rare words the sources never use is not."""

from retrieval import coverage

# (configuration, lexeme, chunks sampled, chunks holding it, passages holding it): a 40-chunk
# slide deck of tax cases.
TOTAL = 40


def _counts(rows):
    return [("english", lexeme, TOTAL, df, in_hits) for lexeme, df, in_hits in rows]


def test_all_words_but_one_the_document_never_uses_cover_the_question():
    # "How much does the waiter on €8.65 an hour gain from the Budget?"
    counts = _counts(
        [("much", 0, 0), ("waiter", 2, 1), ("8.65", 1, 1), ("hour", 3, 2), ("gain", 3, 1)]
        + [("budget", TOTAL, 8)]
    )

    assert coverage.word_share(counts) >= coverage.WORDS_COVER


def test_questions_about_what_the_document_never_says_are_not_covered_by_words():
    # "Who painted the Mona Lisa?" and "When did the Roman Empire fall?"
    mona_lisa = _counts([("paint", 0, 0), ("mona", 0, 0), ("lisa", 0, 0)])
    roman_empire = _counts([("roman", 0, 0), ("empir", 0, 0), ("fall", 5, 1)])

    assert coverage.word_share(mona_lisa) < coverage.WORDS_COVER
    assert coverage.word_share(roman_empire) < coverage.WORDS_COVER
