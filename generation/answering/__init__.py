"""Answering a question in a notebook with citations the reader can check.

asking.py: answer_question and stream_answer, at the asker's expense; preparing.py: the
question refused, answered by Loupe, or searched and put into a prompt, and the model's
reply mapped and stored; prompt.py: what the prompt holds (passages that fit, history);
storing.py: the answer and its verified citations written in one transaction.
"""

from generation.answering.asking import Evidence, answer_question, stream_answer
from generation.answering.preparing import QuestionRefused
from generation.answering.prompt import Turn, extractive_passages
from generation.answering.storing import Answer

__all__ = [
    "Answer",
    "Evidence",
    "QuestionRefused",
    "Turn",
    "answer_question",
    "extractive_passages",
    "stream_answer",
]
