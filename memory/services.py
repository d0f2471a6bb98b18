"""The facts a person asked Loupe to remember: added, changed, forgotten, and the ones
given to the model with a question (the newest that fit PROMPT_TOKENS)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from language.tokens import estimate_tokens
from memory.models import MAX_FACT_CHARS, MAX_FACTS, Memory
from notebooks.models import Notebook
from texts.errors import UserFacingError

# Room the facts may take in a question's prompt: they come with every question, so a long
# list must not crowd out the passages the answer is written from.
PROMPT_TOKENS = 500


class MemoryRefused(UserFacingError):
    """A fact that cannot be remembered, changed or forgotten as asked."""


def facts_for(*, user: User, notebook: Notebook) -> QuerySet[Memory]:
    """The facts that apply in the notebook, oldest first (the numbers /memory shows): its
    own and those for all of the person's notebooks."""
    return Memory.objects.filter(Q(notebook=notebook) | Q(notebook=None), user=user)


def _clean(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        raise MemoryRefused(
            _("Write the fact to remember, e.g. “/remember I teach year 9 biology”.")
        )
    if len(text) > MAX_FACT_CHARS:
        raise MemoryRefused(
            _(
                "A remembered fact is at most %(max)s characters; this one has %(count)s. "
                "Shorten it, or split it into two."
            )
            % {"max": MAX_FACT_CHARS, "count": len(text)}
        )
    return text


def remember(*, user: User, notebook: Notebook | None, text: str) -> tuple[Memory, bool]:
    """Remember a fact for the notebook (None: all of the person's notebooks); the fact and
    whether it is new (the same words already remembered there are not kept twice)."""
    text = _clean(text)
    with transaction.atomic():
        # The person's row lock: two commands at once cannot both pass the cap.
        User.objects.select_for_update().filter(pk=user.pk).first()
        same = Memory.objects.filter(user=user, notebook=notebook, text__iexact=text).first()
        if same is not None:
            return same, False
        if Memory.objects.filter(user=user).count() >= MAX_FACTS:
            raise MemoryRefused(
                _(
                    "You have %(max)s remembered facts, the most Loupe keeps. Forget some "
                    "first: /memory lists them, /forget 3 forgets the third."
                )
                % {"max": MAX_FACTS}
            )
        return Memory.objects.create(user=user, notebook=notebook, text=text), True


def change_memory(*, memory: Memory, text: str, everywhere: bool, notebook: Notebook) -> Memory:
    """New words for a fact, and where it applies: everywhere, or in `notebook` alone."""
    memory.text = _clean(text)
    memory.notebook = None if everywhere else notebook
    memory.save(update_fields=["text", "notebook", "updated_at"])
    return memory


def find_fact(*, user: User, notebook: Notebook, which: str) -> Memory:
    """The fact that applies here named by its number in /memory's list, or by words it
    holds (its whole text, else a part only it holds)."""
    which = " ".join(which.split())
    if not which:
        raise MemoryRefused(
            _(
                "Name the fact to forget: its number in /memory's list (“/forget 2”) or "
                "words from it (“/forget year 9”)."
            )
        )
    facts = list(facts_for(user=user, notebook=notebook))
    if which.isdigit():
        number = int(which)
        if not 1 <= number <= len(facts):
            raise MemoryRefused(
                _(
                    "There is no remembered fact %(number)s here: %(count)s apply. "
                    "/memory lists them."
                )
                % {"number": number, "count": len(facts)}
            )
        return facts[number - 1]
    exact = [fact for fact in facts if fact.text.casefold() == which.casefold()]
    if exact:
        return exact[0]
    holding = [
        (number, fact)
        for number, fact in enumerate(facts, start=1)
        if which.casefold() in fact.text.casefold()
    ]
    if not holding:
        raise MemoryRefused(
            _("No remembered fact here holds “%(words)s”. /memory lists them with their numbers.")
            % {"words": which}
        )
    if len(holding) > 1:
        numbers = ", ".join(str(number) for number, _fact in holding)
        raise MemoryRefused(
            _(
                "%(count)s remembered facts hold “%(words)s” (%(numbers)s). Forget one by its "
                "number, e.g. /forget %(first)s."
            )
            % {
                "count": len(holding),
                "words": which,
                "numbers": numbers,
                "first": holding[0][0],
            }
        )
    return holding[0][1]


def forget_all(*, user: User, notebook: Notebook, everywhere: bool = False) -> int:
    """Forget the facts remembered for this notebook; with `everywhere`, also those for all
    of the person's notebooks (every fact /memory lists here). How many were forgotten."""
    facts = (
        facts_for(user=user, notebook=notebook)
        if everywhere
        else facts_here(user=user, notebook=notebook)
    )
    deleted, _by_model = facts.delete()
    return deleted


def facts_here(*, user: User, notebook: Notebook) -> QuerySet[Memory]:
    """The facts remembered for this notebook alone."""
    return Memory.objects.filter(notebook=notebook, user=user)


def facts_to_give(*, user: User, notebook: Notebook) -> list[str]:
    """The facts that go to the model with a question here: the newest that fit
    PROMPT_TOKENS, oldest first."""
    given: list[str] = []
    budget = PROMPT_TOKENS
    for fact in facts_for(user=user, notebook=notebook).order_by("-created_at", "-id"):
        budget -= estimate_tokens(fact.text) + 2  # its "- " and line break
        if budget < 0:
            break
        given.append(fact.text)
    return given[::-1]
