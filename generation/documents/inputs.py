"""What a generator reads: the sources' summaries and, from every source, the passages that
best match the kind's focus query. Generated documents are never read: every document
derives from the person's own material, not from an earlier paraphrase of it.

A notebook whose material does not fit one prompt (GENERATION_INPUT_TOKENS) is condensed
first, group by group (map), into notes that keep each passage's [n]; the notes are then
written up in one call (reduce). So every source counts, not only the top few chunks, and
the [n] of the final document still name the retrieved passages.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth.models import User

from language.tokens import estimate_tokens
from library import embedding_state
from library.models import Source
from notebooks.models import Notebook
from providers import embeddings
from providers.chat import chat
from retrieval.search import Hit, spread_over_source
from sharing import access
from texts import Text

if TYPE_CHECKING:
    from generation.documents.deadline import Deadline


# A short source still gives a generator this many passages (or all it has), however long
# the others are.
MIN_PASSAGES_PER_SOURCE = 2


class GenerationFailed(Exception):
    """The document cannot be made; the message says why and what to do."""


@dataclass(frozen=True)
class Inputs:
    sources: list[Source]
    # Every passage, numbered from 1 in this order: passage [n] is hits[n - 1]. An offline
    # document adds the chunks it quotes beyond these (reading.cite), at the end.
    hits: list[Hit]
    language: str  # ISO 639-1 of the sources (the most common), "" when unknown

    def hits_of(self, source: Source) -> list[tuple[int, Hit]]:
        return [
            (number, hit)
            for number, hit in enumerate(self.hits, start=1)
            if hit.chunk.source_id == source.pk
        ]


def input_sources(notebook: Notebook, chosen_sources: Sequence[int] | None = None) -> list[Source]:
    """The notebook's ready sources a generator may read: never a generated document; only
    the `chosen_sources` (ids its maker had ticked) when given."""
    links = (
        access.notebook_links(notebook)
        .filter(source__status=Source.Status.READY)
        .exclude(source__kind=Source.Kind.GENERATED)
        .select_related("source")
        .order_by("added_at", "id")
    )
    if chosen_sources is not None:
        links = links.filter(source_id__in=list(chosen_sources))
    return [link.source for link in links]


def gather(
    *,
    notebook: Notebook,
    user: User,
    focus: str,
    chosen_sources: Sequence[int] | None = None,
    passages: int | None = None,
) -> Inputs:
    """Embed the focus query once (one metered call) and read every source through: each
    is cut into stretches (as many as its share of `passages`, GENERATION_PASSAGES unless
    given), and from each stretch comes the passage nearest the focus. So a document covers
    its sources from the first chapter to the last, not only the few pages that best match
    one query."""
    sources = input_sources(notebook, chosen_sources)
    if not sources:
        raise GenerationFailed(
            Text(
                "This notebook has no ready sources to generate from (generated documents do "
                "not count). Add a document and wait until it is ready."
            )
        )
    model = embedding_state.active()
    vector = embeddings.embed_query(focus, user=user, model=model)
    hits: list[Hit] = []
    shares = passage_shares(sources, passages or settings.GENERATION_PASSAGES)
    for source, parts in zip(sources, shares, strict=True):
        hits += spread_over_source(
            source_id=source.pk, query_vector=vector, model=model.name, parts=parts
        )
    languages = Counter(source.language for source in sources if source.language)
    language = languages.most_common(1)[0][0] if languages else ""
    return Inputs(sources=sources, hits=hits, language=language)


def passage_shares(sources: Sequence[Source], total: int) -> list[int]:
    """How many passages each source gives: `total` shared in proportion to the sources'
    lengths (in chunks), at least MIN_PASSAGES_PER_SOURCE each, never more than a source
    has."""
    chunks = sum(source.chunk_count for source in sources) or 1
    shares = [round(total * source.chunk_count / chunks) for source in sources]
    return [
        min(source.chunk_count, max(MIN_PASSAGES_PER_SOURCE, share))
        for source, share in zip(sources, shares, strict=True)
    ]


def passage_place(hit: Hit, *, page: bool = True) -> str:
    """Where a passage stands, for the model: "Manual, page 12, Networking › DNS"."""
    where = hit.chunk.source.title
    if hit.chunk.page and page:
        where += f", page {hit.chunk.page}"
    if hit.chunk.section:  # where in the document it stands, for the notes' structure
        where += ", " + " › ".join(hit.chunk.section[-2:])
    return where


def _passage_block(number: int, hit: Hit) -> str:
    return f"[{number}] ({passage_place(hit)})\n{hit.chunk.text.strip()}"


def material_blocks(inputs: Inputs) -> list[str]:
    """The prompt's material: per source its summary, then its numbered passages."""
    blocks: list[str] = []
    for source in inputs.sources:
        head = f"Document: {source.title} ({source.get_kind_display()})"
        if source.summary:
            head += f"\nSummary (not a passage, do not cite it): {source.summary}"
        blocks.append(head)
        blocks += [_passage_block(number, hit) for number, hit in inputs.hits_of(source)]
    return blocks


CONDENSE_PROMPT = """You condense source material for a writer who will make a {kind} from \
it. Write short notes: every fact, figure, date, name and comparison that could matter, \
each note ending with the [n] marker of the passage it comes from (only markers that \
appear in the material). Keep the material's language. Notes only, no introduction."""


def prompt_budget(output_tokens: int) -> int:
    """The most a generator's prompt may hold (estimated tokens): GENERATION_INPUT_TOKENS,
    and within the model's context (CHAT_CONTEXT_TOKENS, a local model's own) room for its
    reply. (A repair call that would not fit with the reply it repairs is sent without it:
    structured.generate_json.)"""
    room = settings.CHAT_CONTEXT_TOKENS - output_tokens - CONTEXT_MARGIN_TOKENS
    return min(settings.GENERATION_INPUT_TOKENS, room)


# Token counts here are estimates (language/tokens.py); the model's tokenizer may count
# a few more.
CONTEXT_MARGIN_TOKENS = 256
MAX_ROUNDS = 3
CONDENSE_MIN_TOKENS = 200


def fit_material(
    blocks: list[str],
    *,
    kind: str,
    user: User,
    budget: int,
    on_progress: Callable[[int, int], None] | None = None,
    deadline: Deadline | None = None,
) -> str:
    """The material as one text within `budget` tokens: as it is when it fits, else
    condensed by the chat model group by group, as often as needed (at most three rounds),
    each call within the `deadline` when given."""
    for _round in range(MAX_ROUNDS + 1):
        text = "\n\n".join(blocks)
        if estimate_tokens(text) <= budget:
            return text
        if _round == MAX_ROUNDS:
            break
        groups = _groups(blocks, budget=budget)
        if len(groups) == 1 and len(blocks) == 1:
            # One block larger than the budget on its own: cut it rather than loop.
            blocks = [_cut(blocks[0], budget)]
            continue
        notes: list[str] = []
        for done, group in enumerate(groups):
            if on_progress:
                on_progress(done, len(groups))
            messages = [
                {"role": "system", "content": CONDENSE_PROMPT.format(kind=kind)},
                {"role": "user", "content": "\n\n".join(group)},
            ]
            # Notes shorter than what they condense, or the rounds would never fit.
            max_tokens = max(CONDENSE_MIN_TOKENS, estimate_tokens(messages[1]["content"]) // 2)
            call = deadline.chat if deadline is not None else chat
            reply = call(messages, user=user, temperature=0.1, max_tokens=max_tokens)
            notes.append(reply.text.strip())
        if on_progress:
            on_progress(len(groups), len(groups))
        blocks = notes
    raise GenerationFailed(
        Text(
            "The sources do not fit the generator's input budget (GENERATION_INPUT_TOKENS = "
            "%(budget)s) even after condensing them %(rounds)s times; raise the budget or "
            "generate from fewer sources.",
            budget=budget,
            rounds=MAX_ROUNDS,
        )
    )


def _groups(blocks: list[str], *, budget: int) -> list[list[str]]:
    """Consecutive blocks packed into groups of at most about half the budget, so that each
    condensing call has room for its answer."""
    limit = max(budget // 2, 200)
    groups: list[list[str]] = [[]]
    size = 0
    for block in blocks:
        tokens = estimate_tokens(block)
        if groups[-1] and size + tokens > limit:
            groups.append([])
            size = 0
        groups[-1].append(block if tokens <= limit else _cut(block, limit))
        size += min(tokens, limit)
    return groups


def _cut(text: str, budget: int) -> str:
    """The head of `text` within `budget` tokens (estimated, word by word)."""
    words = text.split(" ")
    kept: list[str] = []
    used = 0
    for word in words:
        used += estimate_tokens(word)
        if used > budget:
            break
        kept.append(word)
    return " ".join(kept)
