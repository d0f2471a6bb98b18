"""How a notebook's chat answers: its goal and length (set on the notebook page), turned
into the system prompt for the model and, offline, into how many sentences the extractive
answer quotes. The rules of citing stay the same whatever the style: the style is added
after them and can only change how the answer reads, never what it may claim."""

from __future__ import annotations

from django.utils.translation import gettext as _

from generation import extractive, prompts
from notebooks.models import Notebook
from texts.errors import UserFacingError

MAX_INSTRUCTIONS = 2000

LEARNING_GUIDE = """Style: you are a learning guide. Explain the answer step by step in plain \
words, as to someone learning the subject, still citing every claim. End with one short \
question that checks the reader's understanding or invites them to go further, answerable \
from the passages."""

CUSTOM = """Style: the notebook's owner asked you to answer as follows. Follow it as long as \
it does not break the rules above (only facts from the passages, every claim cited).
---
{instructions}
---"""

LENGTHS: dict[str, str] = {
    Notebook.ChatLength.SHORTER: "Length: keep the answer short, two or three sentences at most.",
    Notebook.ChatLength.DEFAULT: "",
    Notebook.ChatLength.LONGER: (
        "Length: answer at length, covering every relevant point the passages make."
    ),
}

# Offline: sentences the extractive answer quotes for each length.
EXTRACTIVE_SENTENCES: dict[str, int] = {
    Notebook.ChatLength.SHORTER: 1,
    Notebook.ChatLength.DEFAULT: extractive.MAX_SENTENCES,
    Notebook.ChatLength.LONGER: 6,
}


def system_prompt(notebook: Notebook) -> str:
    """The answer's system prompt: the citing rules, then the notebook's style, if any."""
    parts = [prompts.SYSTEM_PROMPT]
    if notebook.chat_goal == Notebook.ChatGoal.LEARNING:
        parts.append(LEARNING_GUIDE)
    elif notebook.chat_goal == Notebook.ChatGoal.CUSTOM and notebook.chat_instructions.strip():
        parts.append(CUSTOM.format(instructions=notebook.chat_instructions.strip()))
    if length := LENGTHS.get(notebook.chat_length, ""):
        parts.append(length)
    return "\n\n".join(parts)


def extractive_sentences(notebook: Notebook) -> int:
    return EXTRACTIVE_SENTENCES.get(notebook.chat_length, extractive.MAX_SENTENCES)


def set_chat_style(*, notebook: Notebook, goal: str, length: str, instructions: str) -> None:
    """Change how the notebook's chat answers; a UserFacingError naming what is wrong."""
    if goal not in Notebook.ChatGoal.values:
        raise UserFacingError(_("Unknown chat goal %(goal)s.") % {"goal": repr(goal)})
    if length not in Notebook.ChatLength.values:
        raise UserFacingError(_("Unknown answer length %(length)s.") % {"length": repr(length)})
    instructions = instructions.strip()
    if len(instructions) > MAX_INSTRUCTIONS:
        raise UserFacingError(
            _("Custom instructions may be at most %(max)s characters (these are %(count)s).")
            % {"max": MAX_INSTRUCTIONS, "count": len(instructions)}
        )
    if goal == Notebook.ChatGoal.CUSTOM and not instructions:
        raise UserFacingError(_("Write the custom instructions, or choose another goal."))
    notebook.chat_goal, notebook.chat_length = goal, length
    notebook.chat_instructions = instructions
    notebook.save(update_fields=["chat_goal", "chat_length", "chat_instructions"])
