from citations.verification import (
    SUPPORT_THRESHOLD,
    claims_by_marker,
    sentence_spans,
    verify_citations,
)

HERONS = "Grey herons wait at the pond.\nHerons eat fish, frogs and small mammals. They nest high."
TRAINS = "The station opens at six. Trains leave for Berlin at noon every day."


def test_sentence_spans_cut_the_text_verbatim():
    text = "One sentence.  Two\nlines here!\n\nA new part"
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "One sentence.",
        "Two\nlines here!",
        "A new part",
    ]


def test_a_sentence_does_not_end_at_an_initial_or_an_abbreviation():
    text = "It was written by Ivan E. Moore II. Tools, e.g. aptitude, help. Siehe z. B. apt."
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "It was written by Ivan E. Moore II.",
        "Tools, e.g. aptitude, help.",
        "Siehe z. B. apt.",
    ]


def test_a_short_word_before_one_in_lower_case_is_a_shortening_not_an_end():
    # Abbreviations of languages the list does not know, and ordinals ("2. stol." is the
    # 2nd century): a small model's answer got a marker after each ("2 [1]. stol [1].").
    text = (
        "Vznikl v polovině 2. stol. př. n. l. a zanikl. Sie wird ggfs. geändert. "
        "Herons fish [1]. then they rest. It weighs 2 kg. Then it flies."
    )
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "Vznikl v polovině 2. stol. př. n. l. a zanikl.",
        "Sie wird ggfs. geändert.",
        "Herons fish [1].",  # a marker ends it, whatever follows
        "then they rest.",
        "It weighs 2 kg.",
        "Then it flies.",
    ]


def test_words_left_out_mid_sentence_do_not_end_it():
    # A small model quoting an error message: a marker was placed before its "...".
    text = "To fix 'GPG error: ... invalid: BADSIG', remove the cache. Wait… Then try again."
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "To fix 'GPG error: ... invalid: BADSIG', remove the cache.",
        "Wait…",
        "Then try again.",
    ]


def test_a_list_items_number_stays_with_its_item():
    text = "You need:\n1. The package gdb.\n2. The -dbgsym packages. Then run it in 2.\n"
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "You need:\n1. The package gdb.",
        "2. The -dbgsym packages.",
        "Then run it in 2.",
    ]


def test_each_marker_collects_the_sentences_that_carry_it():
    claims = claims_by_marker("Herons eat fish [1]. Trains leave at noon. [2] Both [1][2].")
    assert claims == {
        1: ["Herons eat fish .", "Both ."],
        2: ["Trains leave at noon.", "Both ."],
    }


def test_each_list_item_is_a_claim_of_its_own_without_full_stops():
    # As Qwen 1.5B writes steps: items without full stops, a marker after the number.
    answer = "You can:\n- Wait at the pond [1]\n- Leave at noon [2]\n1. [2] Take the train"
    assert claims_by_marker(answer) == {
        1: ["- Wait at the pond"],
        2: ["- Leave at noon", "1.  Take the train"],
    }
    both = verify_citations(
        "Herons:\n- Grey herons wait at the pond [1]\n"
        "- Trains leave for Berlin at noon every day [2]",
        {1: HERONS, 2: TRAINS},
    )
    assert both[1].supported and both[2].supported  # each judged on its own item


def test_a_supported_claim_quotes_the_sentence_that_supports_it_verbatim():
    supports = verify_citations("Herons eat fish and frogs [1].", {1: HERONS})

    assert supports[1].supported
    assert supports[1].quote == "Herons eat fish, frogs and small mammals."
    assert HERONS[supports[1].start : supports[1].end] == supports[1].quote


def test_a_claim_citing_the_wrong_passage_is_flagged_as_weakly_supported():
    supports = verify_citations("Trains leave for Berlin at noon [1].", {1: HERONS})

    assert not supports[1].supported
    assert supports[1].score < SUPPORT_THRESHOLD


def test_one_unsupported_sentence_is_enough_to_flag_a_citation():
    answer = "Herons eat fish and frogs [1]. Trains leave for Berlin at noon [1]."
    assert not verify_citations(answer, {1: HERONS})[1].supported


def test_several_supporting_sentences_are_quoted_as_one_verbatim_stretch():
    answer = "Grey herons wait at the pond [1]. Herons eat fish and frogs [1]."
    support = verify_citations(answer, {1: HERONS})[1]

    assert support.supported
    assert (
        support.quote == "Grey herons wait at the pond.\nHerons eat fish, frogs and small mammals."
    )
