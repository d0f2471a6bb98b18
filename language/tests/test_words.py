from language.words import content_terms, head, split_sentences, terms


def test_lines_broken_inside_a_sentence_are_joined():
    assert split_sentences("A heron\nwaits here. Then\nit flies.\n\nNew part") == [
        "A heron waits here.",
        "Then it flies.",
        "New part",
    ]


def test_head_ends_after_the_given_number_of_words_keeping_passage_order():
    passages = ["one two three.", "", "four, five six seven"]

    assert head(passages, words=5) == "one two three.\n\nfour, five"
    assert head(passages, words=3) == "one two three."
    assert head(passages, words=100) == "one two three.\n\nfour, five six seven"


def test_terms_are_stems_without_stopwords_and_content_terms_leave_out_two_letter_words():
    assert terms("The vaccines of 5G") == ["vacci", "5g"]
    assert content_terms("The vaccines of 5G") == ["vacci"]
