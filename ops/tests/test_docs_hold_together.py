"""The documentation a clone holds: a README short enough to read in five minutes, links that
lead to files in the repository, and no references a clone cannot follow (issue numbers,
files outside the checkout except the test data beside it)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# docs/pending-*.md: notes waiting to be folded into these, not documentation yet.
DOCS = [REPO / "README.md", REPO / "CONTRIBUTING.md", REPO / "bench" / "README.md"] + [
    path for path in sorted((REPO / "docs").glob("*.md")) if not path.name.startswith("pending-")
]
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")
ISSUE = re.compile(r"\bissues? #?\d+", re.IGNORECASE)


def test_the_readme_reads_in_five_minutes():
    lines = (REPO / "README.md").read_text().splitlines()

    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move detail into docs/"


def test_every_link_in_the_docs_leads_to_a_file_of_the_repository():
    broken = []
    for doc in DOCS:
        for target, _ in LINK.findall(doc.read_text()):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            if not (doc.parent / target).exists():
                broken.append(f"{doc.relative_to(REPO)}: {target}")

    assert not broken, broken


def test_no_doc_or_comment_names_an_issue_number_or_a_file_outside_the_checkout():
    sources = DOCS + [
        path
        for pattern in ("*/**/*.py", "*.py", "static/*.js", "templates/**/*.html", "Makefile")
        for path in REPO.glob(pattern)
        if ".venv" not in path.parts and "var" not in path.parts
    ]
    found = []
    for path in sources:
        text = path.read_text(errors="replace")
        found += [f"{path.relative_to(REPO)}: {m}" for m in ISSUE.findall(text)]
        found += [
            f"{path.relative_to(REPO)}: {m}"
            for m in re.findall(r"\.\./shared/[\w./-]+", text)
            if not m.startswith("../shared/data")
        ]

    assert not found, found
