"""A real HTTP server on 127.0.0.1 that speaks enough of the OpenAI API for the tests.

Embeddings are a hashed bag of words, so texts that share words are similar and the same
text always gets the same vector. Chat replies come from a queue the test fills; a chat
request with an image in it (a vision request) takes its reply from a second queue; a request
with stream=true gets its reply as server-sent chunks, one word each; /audio/speech answers
with a real MP3 or WAV tone as long as the input's words would take to say. The server
can also misbehave on purpose (HTTP 500, 429, too slow, or a body that is not JSON) for the
next few requests, and it records every request so a test can read what was sent.
"""

from __future__ import annotations

import base64
import contextlib
import email.message
import email.parser
import hashlib
import io
import json
import math
import re
import struct
import subprocess
import threading
import time
import wave
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WORD_RE = re.compile(r"\w+")
FAILURE_MODES = {"500", "429", "slow", "garbage"}


def fake_embedding(text: str, dimensions: int) -> list[float]:
    """Count each lowercased word into a hashed slot, then scale to length 1."""
    vector = [0.0] * dimensions
    for word in WORD_RE.findall(text.lower()):
        slot = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest()) % dimensions
        vector[slot] += 1.0
    norm = math.sqrt(sum(value * value for value in vector))
    if not norm:
        # A text without words still needs a direction; cosine of a zero vector is undefined.
        vector[0], norm = 1.0, 1.0
    return [value / norm for value in vector]


def count_words(text: str) -> int:
    return len(WORD_RE.findall(text))


IMAGE_TOKENS = 85  # what OpenAI bills a low-detail image; any fixed number serves the tests


def content_tokens(content: Any) -> int:
    """Words of a message's text; an image part counts a fixed number, not its base64."""
    if isinstance(content, list):
        return sum(
            IMAGE_TOKENS if part.get("type") == "image_url" else count_words(part.get("text", ""))
            for part in content
            if isinstance(part, dict)
        )
    return count_words(str(content))


def is_vision_request(body: Any) -> bool:
    """A chat completion whose messages carry an image part."""
    if not isinstance(body, dict):
        return False
    return any(
        isinstance(message.get("content"), list)
        and any(
            isinstance(part, dict) and part.get("type") == "image_url"
            for part in message["content"]
        )
        for message in body.get("messages", [])
        if isinstance(message, dict)
    )


def parse_multipart(content_type: str, raw: bytes) -> dict[str, Any]:
    """A multipart/form-data body as {field: text}; a file field as {"filename", "content"}."""
    message = email.parser.BytesParser().parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    if not message.is_multipart():
        raise ValueError("not a multipart body")
    fields: dict[str, Any] = {}
    for part in message.get_payload():
        assert isinstance(part, email.message.Message)
        name = str(part.get_param("name", header="content-disposition"))
        content = part.get_payload(decode=True) or b""
        assert isinstance(content, bytes)
        filename = part.get_filename()
        if filename is None:
            fields[name] = content.decode(errors="replace")
        else:
            fields[name] = {"filename": filename, "content": content}
    return fields


AUDIO_TYPES = {"mp3": "audio/mpeg", "wav": "audio/wav"}


def tone(seconds: float, frequency: int, audio_format: str) -> bytes:
    """A sine tone as WAV (written here) or MP3 (encoded by imageio-ffmpeg's ffmpeg)."""
    rate = 24_000
    # A whole number of cycles fits in one second, so one second repeated is the tone.
    second = b"".join(
        int(8000 * math.sin(2 * math.pi * frequency * n / rate)).to_bytes(2, "little", signed=True)
        for n in range(rate)
    )
    whole, part = divmod(round(seconds * rate), rate)
    samples = second * whole + second[: part * 2]
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(samples)
    if audio_format == "wav":
        return buffer.getvalue()
    import imageio_ffmpeg

    encoded = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-loglevel", "error", "-i", "pipe:0",
         "-c:a", "libmp3lame", "-b:a", "32k", "-f", "mp3", "pipe:1"],
        input=buffer.getvalue(), capture_output=True, check=True, timeout=60,
    )  # fmt: skip
    return encoded.stdout


@dataclass
class RecordedRequest:
    path: str
    body: Any
    answered_with: str  # "ok" or the failure mode that answered it
    # time.perf_counter() stamps, for the benchmarks (bench/stream_overhead.py): when the
    # body was read, when a streamed reply's first chunk was flushed, when the answer was out.
    received_at: float = 0.0
    first_chunk_at: float | None = None
    answered_at: float | None = None


@dataclass
class _Failure:
    mode: str
    remaining: int
    endpoint: str | None
    skip: int


@dataclass
class FakeOpenAI:
    """The controller a test holds: script replies, switch failures on, read requests."""

    base_url: str = ""
    chat_replies: list[str] = field(default_factory=list)
    # Answers a chat request from its body, before the scripted replies (None: take the
    # next of those): for tests whose number of requests depends on what they test.
    chat_reply_for: Callable[[dict[str, Any]], str | None] | None = None
    vision_replies: list[str] = field(default_factory=list)
    # Transcripts that /audio/transcriptions answers with, in order.
    transcription_replies: list[str] = field(default_factory=list)
    # /audio/speech answers with a tone this long per word of its input (~150 words a minute).
    speech_seconds_per_word: float = 0.4
    requests: list[RecordedRequest] = field(default_factory=list)
    # Answer embeddings with this many dimensions whatever the request asks for.
    force_dimensions: int | None = None
    slow_seconds: float = 3.0
    # Send `Retry-After: <seconds>` (as OpenAI does on a 429) instead of retry-after-ms.
    retry_after_seconds: int | None = None
    # Answer without a `usage` field, as some OpenAI-compatible servers do.
    omit_usage: bool = False
    default_dimensions: int = 64
    # A streamed chat reply (stream=true) waits this long before each chunk, and counts the
    # chunks it has sent, so a test can tell that text arrived before the rest was sent.
    stream_delay: float = 0.0
    # The wait before a streamed reply's first chunk (a model's time to first token) when
    # it differs from stream_delay; None: stream_delay.
    stream_first_delay: float | None = None
    # A streamed reply stalls this long after its first `stream_stall_after` chunks (a model
    # server that stops writing mid-answer); None: no stall.
    stream_stall_after: int | None = None
    stream_stall_seconds: float = 0.0
    chunks_sent: int = 0
    _failures: list[_Failure] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)

    def fail_next(
        self, mode: str, *, times: int = 1, endpoint: str | None = None, skip: int = 0
    ) -> None:
        """Answer `times` requests (to `endpoint`, e.g. "embeddings", or any) badly, after
        letting `skip` of them through."""
        if mode not in FAILURE_MODES:
            raise ValueError(f"unknown failure mode {mode!r}; use one of {sorted(FAILURE_MODES)}")
        with self._lock:
            self._failures.append(
                _Failure(mode=mode, remaining=times, endpoint=endpoint, skip=skip)
            )

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        return [request for request in self.requests if request.path.endswith("/embeddings")]

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [request for request in self.requests if request.path.endswith("/completions")]

    @property
    def vision_requests(self) -> list[RecordedRequest]:
        return [request for request in self.chat_requests if is_vision_request(request.body)]

    def _take_failure(self, path: str) -> str | None:
        with self._lock:
            for failure in self._failures:
                if failure.remaining and (
                    failure.endpoint is None or path.endswith("/" + failure.endpoint)
                ):
                    if failure.skip:
                        failure.skip -= 1
                        return None
                    failure.remaining -= 1
                    return failure.mode
        return None

    def _record(
        self, path: str, body: Any, answered_with: str, received_at: float = 0.0
    ) -> RecordedRequest:
        recorded = RecordedRequest(
            path=path, body=body, answered_with=answered_with, received_at=received_at
        )
        with self._lock:
            self.requests.append(recorded)
        return recorded

    def _next_chat_reply(self, *, vision: bool = False) -> str:
        with self._lock:
            queue = self.vision_replies if vision else self.chat_replies
            if queue:
                return queue.pop(0)
        return "The fake server has no scripted reply."

    def embeddings_response(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = body.get("input", [])
        if isinstance(texts, str):
            texts = [texts]
        dimensions = self.force_dimensions or body.get("dimensions") or self.default_dimensions
        tokens = sum(count_words(text) for text in texts)
        return {
            "object": "list",
            "model": body.get("model", ""),
            "data": [
                {
                    "object": "embedding",
                    "index": index,
                    # As the real API: packed little-endian float32 when asked for base64.
                    "embedding": (
                        base64.b64encode(
                            struct.pack(f"<{dimensions}f", *fake_embedding(text, dimensions))
                        ).decode()
                        if body.get("encoding_format") == "base64"
                        else fake_embedding(text, dimensions)
                    ),
                }
                for index, text in enumerate(texts)
            ],
            **self._usage({"prompt_tokens": tokens, "total_tokens": tokens}),
        }

    def chat_response(self, body: dict[str, Any]) -> dict[str, Any]:
        answered = self.chat_reply_for(body) if self.chat_reply_for is not None else None
        text = (
            answered
            if answered is not None
            else self._next_chat_reply(vision=is_vision_request(body))
        )
        # max_tokens cuts the reply off as a model would (one whitespace-separated piece
        # counted as a token), and says so in finish_reason.
        finish_reason = "stop"
        max_tokens = body.get("max_tokens")
        pieces = re.findall(r"\s*\S+", text)
        if isinstance(max_tokens, int) and len(pieces) > max_tokens:
            text, finish_reason = "".join(pieces[:max_tokens]), "length"
        prompt_tokens = sum(content_tokens(m.get("content", "")) for m in body.get("messages", []))
        completion_tokens = count_words(text)
        return {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish_reason,
                }
            ],
            **self._usage(
                {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                }
            ),
        }

    def chat_stream_events(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The chat.completion.chunk events of a streamed reply: one per word (with the
        space before it), then the usage chunk when `stream_options.include_usage` asks."""
        reply = self.chat_response(body)
        text = reply["choices"][0]["message"]["content"]
        base = {key: reply[key] for key in ("id", "created", "model")}
        base["object"] = "chat.completion.chunk"
        words = re.findall(r"\s*\S+", text) or [""]
        for index, word in enumerate(words):
            delta = {"role": "assistant", "content": word} if index == 0 else {"content": word}
            choice = {"index": 0, "delta": delta, "finish_reason": None}
            yield {**base, "choices": [choice]}
        finish_reason = reply["choices"][0]["finish_reason"]
        yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason}]}
        if (body.get("stream_options") or {}).get("include_usage") and "usage" in reply:
            yield {**base, "choices": [], "usage": reply["usage"]}

    @property
    def transcription_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/audio/transcriptions")]

    def transcription_response(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            text = self.transcription_replies.pop(0) if self.transcription_replies else ""
        return {"text": text}

    @property
    def speech_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/audio/speech")]

    def speech_response(self, body: dict[str, Any]) -> tuple[bytes, str]:
        """A real MP3 (or WAV when asked) of a tone whose length follows the words of the
        input and whose pitch follows the voice, so a test can hear both."""
        seconds = max(1, count_words(str(body.get("input", "")))) * self.speech_seconds_per_word
        voice = str(body.get("voice", ""))
        frequency = (
            200 + int.from_bytes(hashlib.blake2b(voice.encode(), digest_size=2).digest()) % 600
        )
        audio_format = body.get("response_format") or "mp3"
        return tone(seconds, frequency, audio_format), AUDIO_TYPES[audio_format]

    def _usage(self, usage: dict[str, int]) -> dict[str, Any]:
        return {} if self.omit_usage else {"usage": usage}

    @classmethod
    @contextlib.contextmanager
    def running(cls) -> Iterator[FakeOpenAI]:
        controller = cls()
        server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(controller))
        server.daemon_threads = True
        controller.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        try:
            yield controller
        finally:
            controller._stopping.set()  # wakes handlers sleeping in "slow" mode
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)


def _make_handler(controller: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

        def handle(self) -> None:
            # The client gives up on slow answers; writing to its closed socket is expected.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                super().handle()

        def _send(self, status: int, payload: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            if controller.retry_after_seconds is not None:
                self.send_header("Retry-After", str(controller.retry_after_seconds))
            else:
                # Retried requests wait milliseconds, not the client's default backoff.
                self.send_header("retry-after-ms", "10")
            self.end_headers()
            self.wfile.write(payload)

        def _send_json(self, status: int, data: Any) -> None:
            self._send(status, json.dumps(data).encode(), "application/json")

        def _send_events(self, events: Iterator[dict[str, Any]], recorded: RecordedRequest) -> None:
            """Server-sent events, each flushed at once, the connection closed after [DONE]."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for index, event in enumerate(events):
                delay = controller.stream_delay
                if index == 0 and controller.stream_first_delay is not None:
                    delay = controller.stream_first_delay
                if index and index == controller.stream_stall_after:
                    delay = controller.stream_stall_seconds
                if delay and controller._stopping.wait(delay):
                    return
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
                if index == 0:
                    recorded.first_chunk_at = time.perf_counter()
                with controller._lock:
                    controller.chunks_sent += 1
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            recorded.answered_at = time.perf_counter()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            received_at = time.perf_counter()
            content_type = self.headers.get("Content-Type") or ""
            body: Any
            try:
                if content_type.startswith("multipart/form-data"):
                    body = parse_multipart(content_type, raw)
                else:
                    body = json.loads(raw or b"{}")
            except ValueError:
                body = raw.decode(errors="replace")
            path = self.path.split("?")[0]
            failure = controller._take_failure(path)
            recorded = controller._record(path, body, failure or "ok", received_at)

            if failure == "500":
                error = {"message": "The fake server failed on purpose.", "type": "server_error"}
                self._send_json(500, {"error": error})
                return
            if failure == "429":
                error = {"message": "Slow down (fake).", "type": "rate_limit_exceeded"}
                self._send_json(429, {"error": error})
                return
            if failure == "garbage":
                self._send(200, b"<html><body>Bad gateway, but 200</body></html>", "text/html")
                return
            if failure == "slow" and controller._stopping.wait(controller.slow_seconds):
                return

            if path.endswith("/embeddings") and isinstance(body, dict):
                self._send_json(200, controller.embeddings_response(body))
                recorded.answered_at = time.perf_counter()
            elif path.endswith("/chat/completions") and isinstance(body, dict):
                if body.get("stream"):
                    self._send_events(controller.chat_stream_events(body), recorded)
                    return
                self._send_json(200, controller.chat_response(body))
            elif path.endswith("/audio/transcriptions") and isinstance(body, dict):
                self._send_json(200, controller.transcription_response(body))
            elif (
                path.endswith("/audio/speech")
                and isinstance(body, dict)
                and body.get("response_format", "mp3") in AUDIO_TYPES
            ):
                self._send(200, *controller.speech_response(body))
            else:
                error = {"message": f"No route {path}", "type": "invalid_request_error"}
                self._send_json(404, {"error": error})

    return Handler
