"""A remote model's vectors for a source's first chunks, asked for as soon as the chunks are
cut.

Writing the chunks with their words, the summary and the guide take a few tenths of a
second of this process and of PostgreSQL, during which a remote embedding model (the test
server among them) can already be answering: the requests go out from threads then, and
the embedding step (embedding.py) takes their vectors instead of asking again. The words
are still committed first and the vectors after them; only the wall clock shrinks.

Only for a remote model without windows: a local model runs in this process, on the cores
the reading needs, and a model with windows embeds the chunks' parts, not the chunks. At
most MAX_EMBED_CHUNKS chunks (the embedding step's largest batch) are asked for early, and
only by a job that goes on to embed (embedding.embeds_after_reading), so little is paid for
that is not used: a request answered but never taken is billed when the job ends all the
same, as it was paid for.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

from django.conf import settings
from django.contrib.auth.models import User

from ingest.services.embedding import MAX_EMBED_CHUNKS
from providers import embeddings
from retrieval import windows


class EarlyVectors:
    """Embedding requests sent from threads for `texts`, EMBEDDING_BATCH_SIZE texts each,
    up to EMBEDDING_CONCURRENT_REQUESTS at once; each billed once, in the caller's thread."""

    def __init__(self, texts: list[str], *, model: embeddings.EmbeddingModel, user: User) -> None:
        size = settings.EMBEDDING_BATCH_SIZE
        requests = [texts[start : start + size] for start in range(0, len(texts), size)]
        self._model, self._user = model, user
        self._pool = ThreadPoolExecutor(
            max_workers=min(settings.EMBEDDING_CONCURRENT_REQUESTS, len(requests)),
            thread_name_prefix="early-vectors",
        )
        self._answers: list[Future[tuple[list[list[float]], int]]] = [
            self._pool.submit(embeddings.remote_vectors, request, model=model)
            for request in requests
        ]
        self._unbilled = set(range(len(requests)))
        # Where each text's vector will be: its request, its place in it.
        self._places: dict[str, tuple[int, int]] = {}
        for number, request in enumerate(requests):
            for position, text in enumerate(request):
                self._places.setdefault(text, (number, position))

    def in_hand(self, texts: list[str]) -> int:
        """How many of the leading `texts` were asked for early and have their answers,
        after waiting for the first one's: the next batch, written in its own transaction
        as they come in (a stalled request holds back only the texts behind it). 0 when
        the first was not asked for early."""
        if not texts or texts[0] not in self._places:
            return 0
        self._answers[self._places[texts[0]][0]].exception()  # waits; a failure shows in take
        count = 0
        for text in texts:
            place = self._places.get(text)
            if place is None or not self._answers[place[0]].done():
                break
            count += 1
        return count

    def take(
        self, texts: list[str], *, model: embeddings.EmbeddingModel
    ) -> list[list[float]] | None:
        """The vectors of `texts` by `model`, once their requests have answered; None when
        one was not asked for early or `model` is not the one asked (a switch ended
        meanwhile): the caller asks the model itself. A request that failed raises its
        ProviderError here, as asking again would (it had the client's retries already)."""
        if model != self._model or any(text not in self._places for text in texts):
            return None
        vectors = []
        for text in texts:
            number, position = self._places[text]
            answered, tokens = self._answers[number].result()
            self._bill(number, tokens)
            vectors.append(answered[position])
        return vectors

    def close(self) -> None:
        """Cancel the requests not sent yet, wait for those under way, and bill every one
        that answered: it was paid for, taken or not."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        for number in sorted(self._unbilled):
            answer = self._answers[number]
            if not answer.cancelled() and answer.exception() is None:
                self._bill(number, answer.result()[1])

    def _bill(self, number: int, tokens: int) -> None:
        if number in self._unbilled:
            self._unbilled.discard(number)
            embeddings.bill_embedding(user=self._user, model=self._model, tokens=tokens)


@contextmanager
def asked_early(
    texts: list[str], *, model: embeddings.EmbeddingModel, user: User
) -> Iterator[EarlyVectors | None]:
    """The first MAX_EMBED_CHUNKS of `texts` asked of `model` from threads until the block
    ends (then closed); None for a model that is not asked early (the module's docstring)."""
    if not texts or model.is_local or windows.enabled_for(model.name):
        yield None
        return
    early = EarlyVectors(texts[:MAX_EMBED_CHUNKS], model=model, user=user)
    try:
        yield early
    finally:
        early.close()
