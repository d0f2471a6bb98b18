"""Hybrid ranking lifts a chunk that holds the question's neighbouring words near each other
(Fusion.proximity_weight and proximity_window)."""

from retrieval.search import Fusion
from retrieval.tests.chunks import add_chunk, hybrid, make_source, texts

QUESTION = "What is the rate of infection in children?"
# Both hold "rate", "infection" and "children" once each, at the same distance from the
# query vector: dense similarity and ts_rank cannot tell them apart.
FAR_APART = "Children are many; the rate rose in winter and spring, said the report on infection."
# "infection rates": the question's "rate of infection", the other way round.
CLOSE = "Infection rates in children are unknown."
OFF = Fusion(proximity_weight=0)


def test_a_chunk_holding_the_question_s_words_close_together_comes_first(notebook):
    source = make_source(notebook)
    add_chunk(source, FAR_APART, [1.0, 0.0, 0.0])
    add_chunk(source, CLOSE, [1.0, 0.0, 0.0])

    # A tie without the bonus, broken by id: the first chunk added comes first.
    assert texts(hybrid(notebook, question=QUESTION, fusion=OFF)) == [FAR_APART, CLOSE]
    assert texts(hybrid(notebook, question=QUESTION)) == [CLOSE, FAR_APART]


def test_the_bonus_lifts_a_chunk_past_a_closer_one(notebook):
    source = make_source(notebook)
    add_chunk(source, FAR_APART, [1.0, 0.0, 0.0])
    add_chunk(source, CLOSE, [1.0, 0.3, 0.0])
    # Far from the query: the similarities are normalised between it and the closest.
    add_chunk(source, "Grey herons wait at the edge of the pond.", [0.0, 1.0, 0.0])

    assert texts(hybrid(notebook, question=QUESTION, fusion=OFF))[0] == FAR_APART
    assert texts(hybrid(notebook, question=QUESTION))[0] == CLOSE


def test_words_further_apart_than_the_window_do_not_count(notebook):
    source = make_source(notebook)
    # "infection" and "children" four positions apart (stop words keep their positions);
    # in CLOSE three.
    four_apart = "The rate of infection, in all the children, is unknown."
    add_chunk(source, four_apart, [1.0, 0.0, 0.0])
    add_chunk(source, CLOSE, [1.0, 0.0, 0.0])

    # Window 4: both chunks hold both pairs, a tie broken by id.
    assert texts(hybrid(notebook, question=QUESTION, fusion=Fusion(proximity_window=4))) == [
        four_apart,
        CLOSE,
    ]
    # Window 3: only CLOSE holds "infection ... children".
    assert texts(hybrid(notebook, question=QUESTION, fusion=Fusion(proximity_window=3))) == [
        CLOSE,
        four_apart,
    ]


def test_word_pairs_are_stemmed_in_the_source_s_language(notebook):
    # The German configuration stems "Infektionsraten" to "infektionsrat" and drops "im",
    # "die", "der": pairs made under English would name words no German chunk holds.
    source = make_source(notebook, title="de", config="german")
    far_apart = "Winter: Die Kinder bleiben zu Hause und die Infektionsraten steigen."
    close = "Im Winter steigen die Infektionsraten der Kinder."
    add_chunk(source, far_apart, [1.0, 0.0, 0.0])
    add_chunk(source, close, [1.0, 0.0, 0.0])
    question = "Warum steigen im Winter die Infektionsraten?"

    assert texts(hybrid(notebook, question=question, fusion=OFF)) == [far_apart, close]
    assert texts(hybrid(notebook, question=question)) == [close, far_apart]


def test_a_question_of_one_word_or_none_has_no_pairs_and_still_finds_chunks(notebook):
    source = make_source(notebook)
    add_chunk(source, CLOSE, [1.0, 0.0, 0.0])

    assert texts(hybrid(notebook, question="Children?")) == [CLOSE]
    assert texts(hybrid(notebook, question="What is it?")) == [CLOSE]


def test_a_question_with_quotes_and_backslashes_is_searched_by_its_word_pairs(notebook):
    source = make_source(notebook)
    far_apart = "O'Brien's law holds, the patients in the ward said of the rule."
    close = "Patients said: O'Brien's rule holds."
    add_chunk(source, far_apart, [1.0, 0.0, 0.0])
    add_chunk(source, close, [1.0, 0.0, 0.0])
    question = "Why did 'patients' say O'Brien's \\ rule holds?"

    assert texts(hybrid(notebook, question=question, fusion=OFF))[0] == far_apart
    assert texts(hybrid(notebook, question=question))[0] == close
