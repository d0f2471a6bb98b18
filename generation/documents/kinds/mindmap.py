"""A mind map: the notebook's topics as a hierarchy, drawn in the page as SVG."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from generation.documents.extract import key_sentences, source_sentences
from generation.documents.inputs import Inputs
from generation.documents.structured import InvalidOutput
from generation.summaries import _content_terms

FOCUS = "main topics, themes, concepts and how they relate"
MAX_DEPTH = 4
MAX_NODES = 80
BRANCH_CHILDREN = 6

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
            terms = _content_terms(word)
            if not terms or len(word) < 4 or word.isdigit():
                continue
            stems[terms[0]] += 1
            forms.setdefault(terms[0], Counter())[word] += 1
    return [forms[stem].most_common(1)[0][0] for stem, count in stems.most_common(limit)]


def extractive(inputs: Inputs, *, notebook_title: str) -> dict[str, Any]:
    branches: list[dict[str, Any]] = []
    for source in inputs.sources:
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
