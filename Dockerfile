# Loupe's image: the web server and the Procrastinate workers (docker-compose.yml).
FROM python:3.11-slim-bookworm

# espeak-ng: the local speech engine of audio overviews (without TTS_MODEL). ffmpeg comes
# with the imageio-ffmpeg wheel; PDF, OCR, whisper and the local embedding model are wheels.
RUN apt-get update \
    && apt-get install -y --no-install-recommends espeak-ng \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    LOUPE_PRODUCTION=true \
    LOUPE_DATA_DIR=/data \
    STATIC_ROOT=/app/staticfiles

RUN useradd --create-home --uid 1000 --user-group loupe \
    && mkdir -p /app /data \
    && chown loupe:loupe /data

WORKDIR /app
# The lock: every package pinned and checked against its hash, as `make` installs it.
COPY requirements.lock .
RUN pip install --require-hashes -r requirements.lock

COPY . .
# Static files are collected into the image (not the data volume), compressed for
# WhiteNoise. Settings need a database URL and a key to load; nothing connects here.
RUN LOUPE_DATA_DIR=/tmp/build DATABASE_URL=postgresql://build@localhost/build \
    SECRET_KEY=collectstatic-only-not-a-real-secret-key-0000 \
    python manage.py collectstatic --noinput --verbosity 0 \
    && rm -rf /tmp/build

USER loupe
VOLUME ["/data"]
EXPOSE 8000
# The web container; docker-compose.yml gives the migrate and worker containers their own.
CMD ["python", "-m", "uvicorn", "config.asgi:application", "--host", "0.0.0.0", "--port", "8000", \
     "--timeout-graceful-shutdown", "30", "--no-proxy-headers"]
