"""Shared start-up for the benchmarks: Django on the bench's own data folder."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def django_setup() -> None:
    """Set Django up and migrate; the data folder is LOUPE_DATA_DIR (default /tmp/loupe-bench)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("LOUPE_DATA_DIR", "/tmp/loupe-bench")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


@contextmanager
def local_model_server() -> Iterator[Any]:
    """The local model server (LOCAL_CHAT_MODEL's choice) started for a benchmark, Django's
    settings pointed at it as `serve` points its worker; stopped after. Exits saying why
    when there is no model or it does not start."""
    from django.conf import settings

    from providers import local_model, local_model_supervisor

    plan = local_model.local_chat_plan()
    if plan.path is None:
        sys.exit(f"no local model: {plan.reason}")
    server = local_model_supervisor.LocalModelServer(
        plan, data_dir=Path("/tmp/loupe-bench-local-model")
    )
    server.start()
    try:
        if not server.wait_ready(settings.LOCAL_CHAT_START_SECONDS):
            sys.exit(f"the model server did not start: {server.describe()}")
        for name, value in server.environment().items():
            setattr(settings, name, int(value) if value.isdigit() else value)
        yield server
    finally:
        server.stop()
