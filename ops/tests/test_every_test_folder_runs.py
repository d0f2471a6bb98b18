"""`make test` (and CI) runs pytest without paths: pyproject.toml's testpaths decide what runs.
A new app's tests folder missing from it would silently never run (sharing/tests did)."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_tests_folder_is_in_testpaths():
    testpaths = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"
    ]["testpaths"]
    # An app's tests/ folder, or a folder of tests with its own conftest (browser_tests).
    folders = {path.parent.parent.name for path in ROOT.glob("*/tests/__init__.py")}
    folders |= {path.parent.name for path in ROOT.glob("*/conftest.py")}
    assert {"sharing", "browser_tests"} <= folders

    assert folders - set(testpaths) == set()
