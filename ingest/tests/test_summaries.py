from ingest.summaries import extractive_summary


def test_an_extractive_summary_stays_near_a_hundred_and_twenty_words():
    text = " ".join(f"Herons wait by pond {n} for fish in the morning." for n in range(200))

    summary = extractive_summary(text)

    assert 0 < len(summary.split()) <= 120
    assert summary in text


def test_a_text_without_sentences_has_an_empty_extractive_summary():
    assert extractive_summary("  ... --- ") == ""
