"""The offline answerer: the retrieved sentences that best answer the question, each cited.

No language model runs here; the answer is made of the documents' own sentences. It is
labelled "extractive" wherever it is shown, so nobody mistakes it for a generated answer.

What it quotes are the passages' units (generation/passage_units.py): sentences, table rows
and commands, never a heading, a caption, a table's header row or a contents line. A unit
is chosen for the question words it holds (rarer ones count more), for its passage's rank,
for its section's title sharing the question's words and for how close in meaning the part
of the passage it sits in is to the question (the search's part vectors, when known). A
manual's own questions ("How do I …?") are not answers, but lend their match to the
sentence after them; sentences about the document ("This chapter describes …") and the
cut-off ends of sentences begun before the passage are not quoted. Words are compared with
a plural's "s" dropped, and a unit holding no word beyond the question's restates it and
weighs less. A chosen sentence brings the one before it when it leans on it ("This …",
"Es …"), and a sentence ending in ":" or "the following." brings the commands or items it
introduces, wherever it is chosen; the best one also brings the next sentence of its
paragraph (not a lead-in the passage cuts off). Consecutive chunks of a page share some
fifty tokens, so a unit another passage holds whole is quoted once. The answer goes by
stretch of text (a document's same page, or the next page of the same section), the best
first, each in reading order, commands on lines of their own, and of a run of table rows
only the stretch around the question's words.

candidates.py  the passages' units, without copies; their words and closeness
scoring.py     how well each unit answers the question
neighbours.py  what a chosen unit brings along
rendering.py   the chosen units in reading order, as the answer reads
choosing.py    the answer: the best units within the length asked for
weights.py     the tuned numbers, with the evaluation that set them
"""

from __future__ import annotations

from generation.extractive.candidates import Passage
from generation.extractive.choosing import answer
from generation.extractive.weights import MAX_SENTENCES

__all__ = ["MAX_SENTENCES", "Passage", "answer"]
