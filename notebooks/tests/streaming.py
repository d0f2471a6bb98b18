"""Reading a streamed answer's server-sent events in tests."""

import json

from asgiref.sync import async_to_sync
from django.urls import reverse


def ask_stream(client, notebook, **data):
    return client.post(reverse("notebooks:ask_stream", args=[notebook.pk]), data)


def parse(parts: list[bytes]) -> list[tuple[str, dict]]:
    events = []
    for block in b"".join(parts).decode().split("\n\n"):
        if block:
            name, data = block.split("\n")
            events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


def read_all(response, fake_openai=None) -> tuple[list[bytes], int | None]:
    """Every part of the streamed body, and how many chunks the fake model server had
    sent when the first part arrived."""

    async def read():
        parts, sent_at_first = [], None
        async for part in response.streaming_content:
            if sent_at_first is None and fake_openai is not None:
                sent_at_first = fake_openai.chunks_sent
            parts.append(part)
        return parts, sent_at_first

    return async_to_sync(read)()
