"""A mind map: the notebook's topics as a hierarchy, drawn in the page as SVG."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from generation.documents.extract import key_sentences, source_sentences
from generation.documents.inputs import Inputs
from generation.documents.pieces import ONE_PASSAGE, Piece, joined
from generation.documents.structured import InvalidOutput
from ingest.structure import strip_number
from language.words import content_terms
from library.models import Chunk, Source

FOCUS = "main topics, themes, concepts and how they relate"
MAX_DEPTH = 4
MAX_NODES = 80
BRANCH_CHILDREN = 6
# A document's outline as the map: this many chapters at most, their sections below while
# the map stays readable.
MAX_CHAPTERS = 16
SECTIONS_PER_CHAPTER = 5
MAX_LABEL_CHARS = 60

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "root": {"$ref": "#/$defs/node"},
    },
    "required": ["title", "root"],
    "additionalProperties": False,
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "label": {"type": "string", "minLength": 1, "maxLength": 120},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
            "required": ["label", "children"],
            "additionalProperties": False,
        }
    },
}

INSTRUCTIONS = f"""You make a mind map of the user's documents from the passages and \
summaries you are given: a "root" node (the overall subject), main topics as its children, \
and sub-topics below them, at most {MAX_DEPTH} levels deep and about 30 nodes in all.

Labels are short noun phrases (a few words), in the documents' language. No [n] markers."""


IDEAS_PER_TOPIC = 4
IDEA_WORDS = 6


def _branch(reply: dict[str, Any]) -> dict[str, Any]:
    """The topic with its ideas that are labels: one that is a sentence, or was stopped at
    its most characters, is left out; a topic left with none is asked again."""
    ideas = [
        idea.strip()
        for idea in reply["ideas"]
        if len(idea) < MAX_LABEL_CHARS and len(idea.split()) <= IDEA_WORDS
    ]
    if not ideas:
        raise InvalidOutput(
            f"every idea is a sentence; give each in 1 to {IDEA_WORDS} words, a noun phrase"
        )
    children = [{"label": idea, "children": []} for idea in ideas]
    return {"branches": [{"label": reply["topic"].strip(), "children": children}]}


BY_PASSAGE = Piece(
    schema={
        "type": "object",
        "properties": {
            "topic": {"type": "string", "minLength": 1, "maxLength": MAX_LABEL_CHARS},
            "ideas": {
                "type": "array",
                "minItems": 1,
                "maxItems": IDEAS_PER_TOPIC,
                "items": {"type": "string", "minLength": 1, "maxLength": MAX_LABEL_CHARS},
            },
        },
        "required": ["topic", "ideas"],
        "additionalProperties": False,
    },
    instructions=f"""You make one branch of a mind map from one part of the user's documents.

- "topic": the subject of this part, a short noun phrase (a few words).
- "ideas": 2 to {IDEAS_PER_TOPIC} key concepts, tools or facts below it, each a noun phrase \
of 1 to {IDEA_WORDS} words, not a sentence.
{ONE_PASSAGE}""",
    max_tokens=250,
    part=lambda reply, number: _branch(reply),
    assemble=lambda parts, title: {
        "title": title,
        "root": {"label": title, "children": _merged(joined(parts, "branches"))},
    },
    title=lambda notebook: notebook,
)


def _merged(branches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Branches of one topic (two passages on it) as one, an idea named twice (or named as
    its topic) once."""
    merged: dict[str, dict[str, Any]] = {}
    for branch in branches:
        kept = merged.setdefault(
            branch["label"].lower(), {"label": branch["label"], "children": []}
        )
        named = {branch["label"].lower()} | {child["label"].lower() for child in kept["children"]}
        for child in branch["children"]:
            if child["label"].lower() not in named:
                named.add(child["label"].lower())
                kept["children"].append(child)
    return list(merged.values())


def _count(node: dict[str, Any], depth: int = 1) -> tuple[int, int]:
    nodes, deepest = 1, depth
    for child in node["children"]:
        count, child_depth = _count(child, depth + 1)
        nodes += count
        deepest = max(deepest, child_depth)
    return nodes, deepest


def check(data: dict[str, Any], passages: int) -> None:
    nodes, depth = _count(data["root"])
    if depth > MAX_DEPTH + 1:
        raise InvalidOutput(f"the map is {depth} levels deep; keep it to {MAX_DEPTH}")
    if nodes > MAX_NODES:
        raise InvalidOutput(f"the map has {nodes} nodes; keep it under {MAX_NODES}")


HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _headings(text: str) -> list[str]:
    """Markdown headings, and short title-like lines (no closing stop, a capital start)."""
    found = [match.group(1) for match in HEADING_RE.finditer(text)]
    for line in text.splitlines():
        line = line.strip()
        words = line.split()
        if (
            2 <= len(words) <= 8
            and line[0].isupper()
            and not line.endswith((".", ",", ";", ":", "?", "!"))
            and not line.startswith("#")
        ):
            found.append(line)
    return found


def _key_phrases(quotes: list[str], limit: int) -> list[str]:
    """The content words these sentences use most, each in its most common written form."""
    stems: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = {}
    for sentence in quotes:
        for word in re.findall(r"\w+", sentence):
            terms = content_terms(word)
            if not terms or len(word) < 4 or word.isdigit():
                continue
            stems[terms[0]] += 1
            forms.setdefault(terms[0], Counter())[word] += 1
    return [forms[stem].most_common(1)[0][0] for stem, count in stems.most_common(limit)]


def _short(label: str) -> str:
    """A node's label: without its section number, not shouting, and short."""
    text = strip_number(label)
    if text.isupper() and len(text) > 3:
        text = text.capitalize()
    if len(text) > MAX_LABEL_CHARS:
        text = text[: MAX_LABEL_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return text


def outline_branches(source: Source, *, budget: int) -> list[dict[str, Any]]:
    """The source's chapters and their first sections, in reading order, from the section
    paths its chunks carry (the PDF's outline, or its headings); [] when it has none."""
    chapters: dict[str, list[str]] = {}
    paths = (
        Chunk.objects.filter(source=source).order_by("ordinal").values_list("section", flat=True)
    )
    for path in paths:
        if not path:
            continue
        sections = chapters.setdefault(path[0], [])
        if len(path) > 1 and path[1] not in sections:
            sections.append(path[1])
    if len(chapters) < 2 and not any(chapters.values()):
        return []  # one heading is not a structure
    if len(chapters) == 1:
        # One chapter is the document's own title: its sections are the branches.
        ((title, sections),) = chapters.items()
        return [{"label": _short(title), "children": _leaves(sections[: budget - 1])}]
    chosen = list(chapters.items())[:MAX_CHAPTERS]
    per_chapter = max(0, min(SECTIONS_PER_CHAPTER, (budget - len(chosen)) // max(len(chosen), 1)))
    return [
        {"label": _short(chapter), "children": _leaves(sections[:per_chapter])}
        for chapter, sections in chosen
    ]


def _leaves(labels: list[str]) -> list[dict[str, Any]]:
    return [{"label": _short(label), "children": []} for label in labels]


def extractive(inputs: Inputs, *, notebook_title: str) -> dict[str, Any]:
    """The documents' own outlines (chapters, then sections); a source without one gets
    its headings, and key terms as the last resort."""
    branches: list[dict[str, Any]] = []
    budget = (MAX_NODES - 2) // max(len(inputs.sources), 1) - 1
    for source in inputs.sources:
        outline = outline_branches(source, budget=budget)
        if len(outline) == 1:
            branches.append(outline[0])
            continue
        if outline:
            branches.append({"label": source.title[:120], "children": outline})
            continue
        texts = [hit.chunk.text for _n, hit in inputs.hits_of(source)]
        seen: set[str] = set()
        headings = []
        for heading in (heading for text in texts for heading in _headings(text)):
            if heading.lower() not in seen and heading.lower() != source.title.lower():
                seen.add(heading.lower())
                headings.append(heading[:120])
        sentences = [quote.text for quote in key_sentences(source_sentences(inputs, source), 12)]
        labels = headings[:BRANCH_CHILDREN] or _key_phrases(sentences, BRANCH_CHILDREN)
        branches.append(
            {
                "label": source.title[:120],
                "children": [{"label": label, "children": []} for label in labels],
            }
        )
    return {
        "title": notebook_title,
        "root": {"label": notebook_title[:120], "children": branches},
    }


def readable(data: dict[str, Any]) -> str:
    lines = [f"# {data['title']}", ""]

    def walk(node: dict[str, Any], depth: int) -> None:
        lines.append(f"{'  ' * depth}- {node['label']}")
        for child in node["children"]:
            walk(child, depth + 1)

    walk(data["root"], 0)
    return "\n".join(lines)
