"""docs/configuration.md names every setting: each variable `.env.example` shows and each
one `config/settings/` reads, so a setting added to either cannot go undocumented."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "configuration.md").read_text()
DOCUMENTED = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", DOC))
# Read by the settings but no setting of Loupe's: where a home folder is.
NOT_SETTINGS = {"HOME"}


def names_in_env_example() -> set[str]:
    text = (REPO / ".env.example").read_text()
    return set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", text, flags=re.MULTILINE))


def names_read_by_settings() -> set[str]:
    names = set()
    for path in [*(REPO / "config").glob("*.py"), *(REPO / "config" / "settings").glob("*.py")]:
        text = path.read_text()
        names |= set(re.findall(r"env_[a-z_]+\(\s*\"([A-Z][A-Z0-9_]+)\"", text))
        names |= set(re.findall(r"os\.environ(?:\.get)?[\[(]\"([A-Z][A-Z0-9_]+)\"", text))
    return names - NOT_SETTINGS


def test_every_variable_of_env_example_is_documented():
    names = names_in_env_example()

    assert len(names) > 50, names
    assert not names - DOCUMENTED, f"not in docs/configuration.md: {sorted(names - DOCUMENTED)}"


def test_every_setting_the_settings_read_is_documented():
    names = names_read_by_settings()

    assert len(names) > 50, names
    assert not names - DOCUMENTED, f"not in docs/configuration.md: {sorted(names - DOCUMENTED)}"
