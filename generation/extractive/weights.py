"""The tuned numbers of the offline (extractive) answer, generation/extractive/, in one
place with the evaluation that set them.

Each was chosen on manual-qa (the Debian Reference in English and German, 60 questions with
a gold page, 20 off-topic; no chat model, local e5, hybrid, k = 8) by `manage.py evaluate
--pages ... --offtopic ...` and `bench/extractive_answers.py` (answers holding 60 % of their
gold quote's content words); the runs and what lost are in docs/retrieval.md ("Paraphrased
questions", "The offline answer's sentence choice"). Change one only with those figures
before and after. The words (terms, stems, stop words) the scores count are
language/words.py's.
"""

from __future__ import annotations

# How long an answer is: at most MAX_SENTENCES chosen units (a notebook's chat length can
# ask for more or fewer, generation/chat_style.py), each cut at MAX_SENTENCE_CHARS; further
# sentences stop once CHARS_PER_SENTENCE characters per allowed sentence are quoted (a
# neighbour or a command block can make one choice long).
MAX_SENTENCES = 3
MAX_SENTENCE_CHARS = 600
CHARS_PER_SENTENCE = 300
MAX_CODE_LINES = 4  # a command and its first lines of output; more are cut with "…"
MAX_INTRODUCED = 4  # units a sentence ending in ":" brings with it
MAX_ITEM_CHARS = 150  # a longer unit after a lead-in is a sentence, not an item of its list
MAX_LISTED_CHARS = 2 * MAX_ITEM_CHARS  # a list's item no sentence: rows run together

# How a unit is scored, beside the question's words it holds (rarer ones count more):
# A further sentence must score RELATIVE_FLOOR of the best one: weaker matches are padding.
RELATIVE_FLOOR = 0.5
# For a section title holding all the question's words (0 cited 50 of 60, 1.2 cited 49).
SECTION_WEIGHT = 0.6
# The search's ranking (fused words and meaning) knows more than cosine similarities, which
# differ by hundredths: the first passage's units get RANK_WEIGHT, the n-th's 1/n of it
# (0.8, 1.5 and 3 cited 48, 48 and 45 of 60).
RANK_WEIGHT = 0.4
# For the unit in the passage part closest to the question in meaning (of all the passages'
# parts; the farthest part's units get 0, scaled in between): the search's embedding knows
# paraphrases that shared words miss (0.5 cited 51, 0.75 and 1.0 52, 1.5 and 2.0 51).
CLOSENESS_WEIGHT = 1.0
# A unit holding fewer than MIN_NEW_TERMS words the question lacks restates it ("• Switching
# to the character console." for "Which keys switch to the character console?") and gets
# RESTATING_SHARE of its score.
MIN_NEW_TERMS = 1
RESTATING_SHARE = 0.8
QUESTION_LEND = 0.9  # share of a manual's question's score its answer sentence gets
# Shorter units are scored as if this many words long: a two-word table header or command
# holding one question word is not a better answer than a sentence holding three.
MIN_SCORED_TERMS = 8
