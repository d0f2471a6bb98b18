"""The install is reproducible: requirements.lock and requirements-dev.lock pin every package
with its hashes, were made (`make lock`) from the requirements as they are now, and are what
this environment has installed (`make` installs only from them, with --require-hashes)."""

from __future__ import annotations

import hashlib
import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
LOCKS = {
    "requirements.lock": ["requirements.txt"],
    "requirements-dev.lock": ["requirements.txt", "requirements-dev.txt", "requirements.lock"],
}
INPUT = re.compile(r"^# inputs sha256: (\S+) ([0-9a-f]{64})$")


def entries(lock: str) -> list[tuple[str, str, Marker | None, list[str]]]:
    """(name, version, marker, hashes) of every package the lock file names."""
    text = (REPO / lock).read_text()
    found: list[tuple[str, str, Marker | None, list[str]]] = []
    # One entry: "name==version [; marker] \" then its "--hash=…" lines.
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        first, *rest = block.split("\n")
        if first.startswith("#") or not first.strip():
            continue
        requirement = Requirement(first.rstrip(" \\"))
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", f"{lock}: {first} is not pinned"
        hashes = [line.strip() for line in rest if line.strip().startswith("--hash=sha256:")]
        found.append(
            (canonicalize_name(requirement.name), specifier.version, requirement.marker, hashes)
        )
    return found


def pins(requirements: str) -> dict[str, str]:
    pinned: dict[str, str] = {}
    for line in (REPO / requirements).read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line or line.startswith("-r"):
            continue
        requirement = Requirement(line)
        (specifier,) = requirement.specifier
        pinned[canonicalize_name(requirement.name)] = specifier.version
    return pinned


@pytest.mark.parametrize("lock", list(LOCKS))
def test_the_lock_was_made_from_the_requirements_as_they_are_now(lock):
    recorded = {
        match.group(1): match.group(2)
        for line in (REPO / lock).read_text().splitlines()
        if (match := INPUT.match(line))
    }
    current = {name: hashlib.sha256((REPO / name).read_bytes()).hexdigest() for name in LOCKS[lock]}

    stale = [name for name in current if recorded.get(name) != current[name]]
    assert not stale, (
        f"{lock} is stale: {', '.join(stale)} changed since it was made. Run `make lock` and "
        "commit the lock files."
    )


@pytest.mark.parametrize("lock", list(LOCKS))
def test_every_package_of_the_lock_is_pinned_and_hashed(lock):
    found = entries(lock)

    assert len(found) > 50, f"{lock} names only {len(found)} packages"
    unhashed = [name for name, _, _, hashes in found if not hashes]
    assert not unhashed, f"{lock}: no hash for {unhashed}"


@pytest.mark.parametrize("lock", list(LOCKS))
def test_every_requirement_is_in_the_lock_at_its_pinned_version(lock):
    locked = {name: version for name, version, marker, _ in entries(lock) if _applies(marker)}
    wanted: dict[str, str] = {}
    for requirements in LOCKS[lock]:
        if requirements.endswith(".txt"):
            wanted |= pins(requirements)

    differing = {
        name: (version, locked.get(name))
        for name, version in wanted.items()
        if locked.get(name) != version
    }
    assert not differing, f"{lock} disagrees with the requirements (wanted, locked): {differing}"


def test_the_dev_lock_keeps_every_version_of_the_runtime_lock():
    runtime = {
        (name, version, str(marker)) for name, version, marker, _ in entries("requirements.lock")
    }
    dev = {
        (name, version, str(marker))
        for name, version, marker, _ in entries("requirements-dev.lock")
    }

    assert runtime <= dev, f"only in requirements.lock: {sorted(runtime - dev)}"


def test_the_installed_packages_are_the_locked_versions():
    differing = {}
    for name, version, marker, _ in entries("requirements-dev.lock"):
        if not _applies(marker):
            continue
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = None
        if installed != version:
            differing[name] = (version, installed)

    assert not differing, (
        f"installed packages differ from requirements-dev.lock (locked, installed): {differing}; "
        "`make test` installs the lock"
    )


def _applies(marker: Marker | None) -> bool:
    return marker is None or marker.evaluate()


@pytest.mark.parametrize("recipe", ["Makefile", "Dockerfile"])
def test_make_and_the_image_install_only_from_the_locks_with_hashes(recipe):
    installs = [
        line.strip()
        for line in (REPO / recipe).read_text().splitlines()
        if re.search(r"pip\)? install", line, flags=re.IGNORECASE)
    ]

    assert installs, f"{recipe} installs nothing"
    for line in installs:
        assert re.search(r"--require-hashes -r requirements(-dev)?\.lock$", line), line
