"""The models Loupe calls (providers/): an OpenAI-compatible endpoint, or the local defaults,
offline; the chat model and its waits, embeddings, vision, speech-to-text and text-to-speech."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from config.env import env_float, env_int, env_list, env_str

# Models. With OPENAI_BASE_URL every role uses that OpenAI-compatible endpoint; without
# it the local defaults serve, offline (see providers/).
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_TIMEOUT_SECONDS = env_float("OPENAI_TIMEOUT_SECONDS", 60.0)
OPENAI_MAX_RETRIES = env_int("OPENAI_MAX_RETRIES", 3, minimum=0)
CHAT_MODEL = env_str("CHAT_MODEL")
# The chat model's own endpoint, when it is not OPENAI_BASE_URL's: `serve` sets it (with
# CHAT_MODEL) for its web server and worker to the local model server it supervises.
CHAT_BASE_URL = env_str("CHAT_BASE_URL")
# The local chat model (providers/local_model.py): with neither OPENAI_BASE_URL nor
# CHAT_MODEL set, `serve` runs llama.cpp's server (xllamacpp) on 127.0.0.1 as a child and
# answers with it. auto: the best packaged model installed; off: no language model, answers
# quote the passages; else a packaged model's name or the path of a .gguf file.
LOCAL_CHAT_MODEL = env_str("LOCAL_CHAT_MODEL", "auto")
# Its context window in tokens (the prompt and the reply), and its threads (0: one per core,
# at most 8). Answers keep their prompts short on their own (CHAT_PASSAGE_TOKENS: a 2-core CPU
# reads ~70 tokens a second); the studio needs room for its material, the reply and a repair.
LOCAL_CHAT_CONTEXT_TOKENS = env_int("LOCAL_CHAT_CONTEXT_TOKENS", 8192, minimum=1024)
LOCAL_CHAT_THREADS = env_int("LOCAL_CHAT_THREADS", 0, minimum=0)
# How long the server may take to load its model and answer /health before it is started again.
LOCAL_CHAT_START_SECONDS = env_float("LOCAL_CHAT_START_SECONDS", 180.0)
# Waits on the chat model (providers/chat.py), sized for a CPU server (Ollama, llama.cpp)
# that reads a 4k-token prompt at 15-50 tokens a second. A streamed answer may take
# CHAT_FIRST_TOKEN_SECONDS to its first word, then CHAT_IDLE_SECONDS between words, however
# long the whole answer runs; a call that is not streamed (summaries, studio documents, query
# rewrites) gets CHAT_TIMEOUT_SECONDS in all. A request is re-sent only when it never
# reached the server or was refused (providers/openai_client.py), never after a wait ran out.
CHAT_FIRST_TOKEN_SECONDS = env_float("CHAT_FIRST_TOKEN_SECONDS", 300.0)
CHAT_IDLE_SECONDS = env_float("CHAT_IDLE_SECONDS", 60.0)
CHAT_TIMEOUT_SECONDS = env_float("CHAT_TIMEOUT_SECONDS", 600.0)
# The chat model's context window in tokens: an answer's prompt (system prompt, earlier
# turns, passages, question) plus CHAT_ANSWER_TOKENS for the reply stay inside it, passages
# dropped from the lowest-ranked up, whole. Set it to the server's context (llama.cpp -c,
# Ollama num_ctx).
CHAT_CONTEXT_TOKENS = env_int("CHAT_CONTEXT_TOKENS", 8192, minimum=512)
CHAT_ANSWER_TOKENS = env_int("CHAT_ANSWER_TOKENS", 1024, minimum=64)
# Each passage of an answer's prompt cut to the sentences that match the question, within
# this many tokens (generation/focus.py); 0: whole passages. `serve` sets it for the local
# model, whose CPU reads every prompt token before the first word.
CHAT_PASSAGE_TOKENS = env_int("CHAT_PASSAGE_TOKENS", 0, minimum=0)
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL")
EMBEDDING_DIMENSIONS = env_int("EMBEDDING_DIMENSIONS", 0, minimum=0)
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 32, minimum=1)
# Requests of EMBEDDING_BATCH_SIZE texts sent to a remote embedding model at once (a long
# source's batches): each mostly waits on the network and the server (providers/embeddings.py).
EMBEDDING_CONCURRENT_REQUESTS = env_int("EMBEDDING_CONCURRENT_REQUESTS", 4, minimum=1)
# Vision: with OPENAI_BASE_URL and VISION_MODEL, pages and images go to that model; otherwise
# the local OCR (rapidocr) reads them, offline.
VISION_MODEL = env_str("VISION_MODEL")
# Speech-to-text: with OPENAI_BASE_URL and STT_MODEL, recordings go to that model's
# /audio/transcriptions; otherwise the local whisper-base (faster-whisper) transcribes them.
STT_MODEL = env_str("STT_MODEL")
# Text-to-speech for audio overviews (providers/tts.py): with OPENAI_BASE_URL and TTS_MODEL,
# that model's /audio/speech speaks, the first two TTS_VOICES for speakers A and B; otherwise
# the local espeak-ng (ESPEAK_BINARY, a name on PATH or a path), offline.
TTS_MODEL = env_str("TTS_MODEL")
TTS_VOICES = env_list("TTS_VOICES", ["alloy", "onyx"])
if len(TTS_VOICES) < 2 or TTS_VOICES[0] == TTS_VOICES[1]:
    raise ImproperlyConfigured(
        f"TTS_VOICES must name two different voices (speaker A, speaker B), got {TTS_VOICES!r}"
    )
# OpenAI's /audio/speech takes at most 4096 characters per call; longer turns are split.
TTS_MAX_INPUT_CHARS = env_int("TTS_MAX_INPUT_CHARS", 4096, minimum=100)
ESPEAK_BINARY = env_str("ESPEAK_BINARY", "espeak-ng")
