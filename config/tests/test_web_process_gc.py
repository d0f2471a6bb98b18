"""The web process leaves what it made at start out of the garbage collector's passes
(config/asgi.py): the collector's full pass, which walked all of it, lands inside answers."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

REPORT = """
import gc
import config.asgi
frozen = gc.get_freeze_count()
print(frozen, len(gc.get_objects()))
"""


def test_the_web_process_freezes_what_it_made_at_start():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run(
        [sys.executable, "-c", REPORT], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    frozen, collected = map(int, done.stdout.split())
    # Django and the apps are most of what a process holds; a request's objects are not.
    assert frozen > 9 * collected, (frozen, collected)
