"""What a chosen unit brings along: the sentence it leans on ("This …"), the commands or
items it introduces ("… as follows:"), and for the best one the next sentence of its paragraph."""

from __future__ import annotations

from generation.extractive.candidates import Candidate, quotable
from generation.extractive.weights import MAX_INTRODUCED, MAX_ITEM_CHARS, MAX_LISTED_CHARS
from generation.passage_units import BULLET_RE, Unit


def follows(candidates: list[Candidate], index: int, other: int) -> bool:
    """`other` is the prose sentence right after the one at `index` (not one it needs)."""
    return (
        other == index + 1
        and not candidates[other].unit.code
        and not (candidates[index].unit.introduces_next)
    )


def with_neighbours(candidates: list[Candidate], index: int, *, follower: bool) -> list[int]:
    """The unit at `index` with the sentence it leans on and the units it introduces; with
    `follower` (the best one) also the next sentence of its paragraph, with what that one
    introduces: a manual's sentence naming the question's topic is often followed by the
    answer ("… cause errors such as 'BADSIG'." "You should remove all cached data …")."""
    group = [index]
    unit = candidates[index].unit
    if is_item(unit) and not unit.code:
        # An item of a list comes with the sentence introducing it and the other items.
        for at in range(index - 1, index - 1 - MAX_INTRODUCED, -1):
            lead = _neighbour(candidates, index, at)
            if lead is None or not (lead.unit.introduces_next or is_item(lead.unit)):
                break
            if lead.unit.introduces_next:
                listed = with_neighbours(candidates, at, follower=False)
                return listed if index in listed else [*listed, index]
    before = _neighbour(candidates, index, index - 1)
    if (
        before is not None
        and not before.unit.fragment
        and not before.unit.code
        # A command's lead-in says what it does, whether or not it ends in ":".
        and (unit.depends_on_previous or unit.code)
    ):
        group.insert(0, index - 1)
    brought = introduced(candidates, index)
    after = _neighbour(candidates, index, index + 1)
    if brought:
        group += brought
    elif (
        follower
        and after is not None
        and after.unit.paragraph == unit.paragraph
        and quotable(after)
        and not _dangling(candidates, index + 1)
    ):
        group += [index + 1, *introduced(candidates, index + 1)]
    return group


def _neighbour(candidates: list[Candidate], index: int, at: int) -> Candidate | None:
    """The unit at `at` when it sits right beside the one at `index` in its passage."""
    if not 0 <= at < len(candidates):
        return None
    here, there = candidates[index], candidates[at]
    beside = there.unit.position - here.unit.position == at - index
    return there if there.passage == here.passage and beside else None


def introduced(candidates: list[Candidate], index: int) -> list[int]:
    """What the unit at `index` comes with: the commands right after it (all of a list of
    commands; of a transcript, a command with its output, and when the unit announces it
    ("… wie folgt beheben:"), the transcript's further commands and the lines between them,
    up to its last command), or the items of the list it introduces ("… as follows:"). A
    heading ends either: the next section is not what was announced."""
    found: list[int] = []
    following = _neighbour(candidates, index, index + 1)
    announces = candidates[index].unit.introduces_next
    if following is not None and following.unit.code and not following.unit.after_heading:
        for at in range(index + 1, index + 1 + MAX_INTRODUCED):
            command = _neighbour(candidates, index, at)
            if command is None or command.unit.after_heading or command.unit.introduces_next:
                break
            if not (command.unit.code or announces):
                break
            found.append(at)
            if "\n" in command.unit.text and not announces:
                break
        while found and not candidates[found[-1]].unit.code:
            found.pop()
    elif candidates[index].unit.introduces_next:
        for at in range(index + 1, index + 1 + MAX_INTRODUCED):
            item = _neighbour(candidates, index, at)
            # A table's rows the page run together are no item to read.
            if (
                item is None
                or item.unit.after_heading
                or not is_item(item.unit)
                or len(item.unit.text) > MAX_LISTED_CHARS
            ):
                break
            found.append(at)
    return found


def _dangling(candidates: list[Candidate], index: int) -> bool:
    """A sentence announcing what follows ("… as follows:") at the end of its passage: what
    it announces is not there, so it is not brought along (chosen for its own words, as
    "… with 10 open reading frames (ORFs):", it is quoted)."""
    return candidates[index].unit.introduces_next and (
        _neighbour(candidates, index, index + 1) is None
    )


def is_item(unit: Unit) -> bool:
    """A command, a list item or a row, not the sentence after a list nor a pointer
    elsewhere ("See Section 7.7") the list happens to end with."""
    if unit.question or unit.introduces_next or unit.about_document:
        return False
    sentence = unit.text.endswith((".", "!")) and len(unit.text) > MAX_ITEM_CHARS / 2
    return unit.code or bool(BULLET_RE.match(unit.text)) or not sentence
