"""Shared start-up for the benchmarks: Django on the bench's own data folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
