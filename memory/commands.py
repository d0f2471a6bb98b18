"""The chat's memory commands, answered without a model call: /remember, /forget,
/memory, /memory clear [all] and /help (and their German names). A message is a command only
when it starts with one of these words: any other text, "/etc/hosts" too, is a question."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from memory import services
from memory.services import MemoryRefused
from notebooks.models import Notebook

REMEMBER, FORGET, MEMORY, HELP = "remember", "forget", "memory", "help"
NAMES = {
    "/remember": REMEMBER,
    "/merken": REMEMBER,
    "/merke": REMEMBER,
    "/forget": FORGET,
    "/vergessen": FORGET,
    "/vergiss": FORGET,
    "/memory": MEMORY,
    "/gedächtnis": MEMORY,
    "/erinnerungen": MEMORY,
    "/help": HELP,
    "/hilfe": HELP,
}
CLEAR_WORDS = {"clear", "löschen", "leeren"}
# "/memory clear all": the facts for all notebooks go too.
ALL_WORDS = {"all", "alle", "alles"}


@dataclass(frozen=True)
class Command:
    name: str
    argument: str


def parse(text: str) -> Command | None:
    """The command the message is, or None for a question."""
    word, _space, rest = text.strip().partition(" ")
    name = NAMES.get(word.split("\n", 1)[0].casefold())
    if name is None:
        return None
    if "\n" in word:  # "/remember\nfact": the fact on the next line
        rest = word.split("\n", 1)[1] + " " + rest
    return Command(name=name, argument=rest.strip())


def run(command: Command, *, user: User, notebook: Notebook) -> str:
    """Do the command and say what was done, in the asker's language; MemoryRefused (the
    message says what to write instead) when it cannot be done as written."""
    if command.name == REMEMBER:
        fact, new = services.remember(user=user, notebook=notebook, text=command.argument)
        if not new:
            return _("Already remembered: “%(fact)s”.") % {"fact": fact.text}
        return _(
            "Remembered for this notebook: “%(fact)s”. Answers here are given it as what you "
            "told Loupe, never as a source. /memory lists what is remembered."
        ) % {"fact": fact.text}
    if command.name == FORGET:
        fact = services.find_fact(user=user, notebook=notebook, which=command.argument)
        fact.delete()
        return _("Forgotten: “%(fact)s”.") % {"fact": fact.text}
    if command.name == MEMORY:
        words = command.argument.casefold().split()
        if (
            words
            and words[0] in CLEAR_WORDS
            and (len(words) == 1 or (len(words) == 2 and words[1] in ALL_WORDS))
        ):
            return _clear(user=user, notebook=notebook, everywhere=len(words) == 2)
        if command.argument:
            raise MemoryRefused(
                _(
                    "“/memory %(words)s” is not a command: /memory lists the remembered facts, "
                    "/memory clear forgets this notebook's, /memory clear all those for all "
                    "your notebooks too."
                )
                % {"words": command.argument}
            )
        return listing(user=user, notebook=notebook)
    return help_text()


def _clear(*, user: User, notebook: Notebook, everywhere: bool) -> str:
    count = services.forget_all(user=user, notebook=notebook, everywhere=everywhere)
    if everywhere:
        if not count:
            return _("Nothing was remembered here, so nothing was forgotten.")
        return ngettext(
            "Forgot the %(count)s remembered fact that applied here.",
            "Forgot all %(count)s remembered facts that applied here.",
            count,
        ) % {"count": count}
    kept = services.facts_for(user=user, notebook=notebook).count()
    if not count:
        said = _("Nothing was remembered for this notebook alone, so nothing was forgotten.")
    else:
        said = ngettext(
            "Forgot the %(count)s fact remembered for this notebook.",
            "Forgot the %(count)s facts remembered for this notebook.",
            count,
        ) % {"count": count}
    if kept:
        said += " " + ngettext(
            "The %(count)s fact for all your notebooks stays; /memory clear all forgets it too.",
            "The %(count)s facts for all your notebooks stay; /memory clear all forgets them too.",
            kept,
        ) % {"count": kept}
    return said


def listing(*, user: User, notebook: Notebook) -> str:
    facts = list(services.facts_for(user=user, notebook=notebook))
    if not facts:
        return _(
            "Nothing is remembered here yet. Tell Loupe about you or how to answer with "
            "/remember, e.g. “/remember I teach year 9 biology”."
        )
    lines = [_("Remembered, and given with each of your questions here:")]
    for number, fact in enumerate(facts, start=1):
        where = _("this notebook") if fact.notebook_id else _("all your notebooks")
        lines.append(f"{number}. {fact.text} ({where})")
    lines.append(
        _(
            "/forget 2 forgets the second; /memory clear forgets this notebook's, /memory "
            "clear all every one listed."
        )
    )
    return "\n".join(lines)


def help_text() -> str:
    return "\n".join(
        [
            _("Commands (answered by Loupe, without a model):"),
            _(
                "/remember <fact> — remember something about you or how to answer, for this "
                "notebook"
            ),
            _("/forget <number or words> — forget one remembered fact"),
            _("/memory — list the remembered facts, with their numbers"),
            _("/memory clear — forget the facts remembered for this notebook"),
            _("/memory clear all — also forget those for all your notebooks"),
            _("/help — this list"),
            _(
                "Remembered facts go to the model as what you told Loupe, never as a source: "
                "no [n] points at one. Change them under “Remembered” beside the chat."
            ),
        ]
    )
